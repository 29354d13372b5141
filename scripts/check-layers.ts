// Fails when an import goes against the layers of docs/architecture.md
// ("Where things live"): `npm run lint:layers`, part of `make lint`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** Top-level folders, lowest first: a folder may import its own layer and those below it. */
export const LAYERS: ReadonlyArray<readonly string[]> = [['kernel'], ['infra'], ['features'], ['platform'], ['api', 'executor', 'operator', 'cli', 'dashboard']];

/** Feature folders, lowest first: a feature may import itself and the features before it, never one after it. */
export const FEATURES = ['auth', 'audit', 'idempotency', 'identity', 'deployments', 'files', 'models', 'webhooks', 'invocations', 'datasets', 'metrics'] as const;

export interface Violation {
  /** Relative to the root, with forward slashes. */
  file: string;
  line: number;
  specifier: string;
  reason: string;
}

const SKIPPED_FOLDERS = new Set(['node_modules', 'dist']);

/** Every .ts file under root, outside node_modules, build output and dot-folders. */
export function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || SKIPPED_FOLDERS.has(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.ts')) files.push(full);
    }
  };
  walk(root);
  return files.sort();
}

/** The module specifiers a file names: static imports and re-exports (type-only included), import(), and import types. */
export function importsOf(fileName: string, text: string): Array<{ specifier: string; line: number }> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: Array<{ specifier: string; line: number }> = [];
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

interface Place {
  layer: number | undefined;
  top: string;
  feature: string | undefined;
}

function placeOf(relative: string): Place {
  const parts = relative.split('/');
  const [top = '', second] = parts;
  const layer = LAYERS.findIndex((folders) => folders.includes(top));
  // features/<name>/… belongs to a feature folder; a file directly in features/ to none.
  return { layer: layer < 0 ? undefined : layer, top, feature: top === 'features' && parts.length > 2 ? second : undefined };
}

/** Why an import from `from` to `to` breaks the order, or undefined when it keeps it. */
export function ruleBroken(from: string, to: string): string | undefined {
  const a = placeOf(from);
  const b = placeOf(to);
  if (a.layer === undefined || b.layer === undefined) return undefined;
  if (b.layer > a.layer) return `${a.top}/ may not import ${b.top}/ (a layer above it)`;
  if (a.feature === undefined || b.feature === undefined || a.feature === b.feature) return undefined;
  const rank = (feature: string) => (FEATURES as readonly string[]).indexOf(feature);
  const unknown = [a.feature, b.feature].find((feature) => rank(feature) < 0);
  if (unknown) return `features/${unknown}/ is not in the feature order (FEATURES in scripts/check-layers.ts)`;
  if (rank(b.feature) > rank(a.feature)) return `features/${a.feature}/ may not import features/${b.feature}/ (after it in the feature order)`;
  return undefined;
}

/** Every import under root that goes against the layers or the feature order. */
export function checkLayers(root: string): Violation[] {
  const violations: Violation[] = [];
  const slashed = (p: string) => p.split(path.sep).join('/');
  for (const file of sourceFiles(root)) {
    const from = slashed(path.relative(root, file));
    for (const { specifier, line } of importsOf(file, fs.readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const to = slashed(path.relative(root, path.resolve(path.dirname(file), specifier)));
      const reason = ruleBroken(from, to);
      if (reason) violations.push({ file: from, line, specifier, reason });
    }
  }
  return violations;
}

/** Prints each import against the order and answers the exit code: 1 when there is one, else 0. */
export function main(root: string, print: (line: string) => void = console.error): number {
  const violations = checkLayers(root);
  for (const v of violations) print(`${v.file}:${v.line}: import '${v.specifier}': ${v.reason}`);
  if (!violations.length) return 0;
  print(`${violations.length} import(s) against the layers of docs/architecture.md ("Where things live")`);
  return 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(path.resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url))));
}
