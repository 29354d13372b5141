import { createRequire } from 'node:module';

type PathToRegexp = (path: string, options?: object) => unknown;
interface PathToRegexpModule {
  pathToRegexp: PathToRegexp & { memoized?: true };
}

const MAX_PATTERNS = 1000;

/**
 * express-openapi-validator (5.6) looks a request's operation up by compiling
 * the pattern of every documented route, on every request. The compile is a
 * pure function of the pattern and its options, and the patterns come from
 * the OpenAPI documents, so the compiled forms are kept: the module the
 * validator loads gets a memoized `pathToRegexp`. The RegExps are not global
 * (`exec` keeps no state), so sharing them is safe.
 */
export function memoizeValidatorRoutePatterns(): void {
  const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const module = fromValidator('path-to-regexp') as PathToRegexpModule;
  if (module.pathToRegexp.memoized) return;
  const compile = module.pathToRegexp;
  const compiled = new Map<string, unknown>();
  const memoized: PathToRegexpModule['pathToRegexp'] = (path, options) => {
    const key = `${path}\u0000${optionsKey(options as Record<string, unknown> | undefined)}`;
    let result = compiled.get(key);
    if (result === undefined) {
      result = compile(path, options);
      if (compiled.size < MAX_PATTERNS) compiled.set(key, result);
    }
    return result;
  };
  memoized.memoized = true;
  module.pathToRegexp = memoized;
}

/** The validator passes `{ sensitive, strict }` on every call: a short key for those, JSON for anything else. */
function optionsKey(options: Record<string, unknown> | undefined): string {
  if (!options) return '';
  const keys = Object.keys(options);
  if (keys.every((key) => key === 'sensitive' || key === 'strict')) return `${options.sensitive ? 's' : '-'}${options.strict ? 's' : '-'}`;
  return JSON.stringify(options);
}
