// Building PromQL from caller input. Values only ever appear inside a
// double-quoted string literal, so escaping what could end or break that
// literal is enough to keep them from changing the query's structure.

/** The placeholder of a catalog template that the label matchers replace. */
export const PARAMS_PLACEHOLDER = '__PARAMS__';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r' };

/**
 * A value as the body of a PromQL double-quoted string: backslash and double
 * quote escaped, and newlines written as `\n` (a raw newline would end the
 * query with a lexer error rather than match it).
 */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n\r]/g, (char) => ESCAPES[char] ?? char);
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * `name="value"` equality matchers joined by commas, in the order given. Names
 * come from the catalog, never from a request, but are still checked so a
 * mistake in the catalog cannot produce a broken or widened query.
 */
export function labelMatchers(labels: ReadonlyArray<readonly [string, string]>): string {
  return labels
    .map(([name, value]) => {
      if (!LABEL_NAME.test(name)) throw new Error(`Invalid Prometheus label name: ${name}`);
      return `${name}="${escapeLabelValue(value)}"`;
    })
    .join(',');
}

/** The template with every `__PARAMS__` replaced by the matchers. */
export function fillTemplate(template: string, matchers: string): string {
  return template.replaceAll(PARAMS_PLACEHOLDER, matchers);
}
