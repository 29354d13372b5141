// Writes the values table of charts/didyma/README.md from the comments of the
// chart's values.yaml (`npm run docs:chart`); `--check` (run by `make lint`
// as `npm run lint:chart`) fails instead when the table is not what it would write.
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Document, isAlias, isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';

const START = '<!-- values-table:start -->';
const END = '<!-- values-table:end -->';
const MARKERS = new RegExp(`${START}[\\s\\S]*${END}`);

export interface ValueRow {
  key: string;
  type: string;
  default: string;
  description: string;
}

/** One line of a table cell: whitespace folded, pipes escaped. */
const cell = (text: string) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

const comment = (...parts: Array<string | null | undefined>) => cell(parts.filter(Boolean).join(' '));

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** A default as a code span: JSON of the value (aliases resolved), `""` for an empty string. */
function defaultOf(value: unknown): string {
  const text = typeof value === 'string' && value !== '' ? value : JSON.stringify(value);
  return `\`${text.replace(/\|/g, '\\|')}\``;
}

/**
 * A row per leaf of values.yaml, block maps walked into (with a row of their
 * own when commented); flow maps, lists and aliases are leaves. A key's
 * description is the comment above it and the one after it on its line (the
 * parser gives the comment above a map's first key to the map).
 */
export function valueRows(valuesYaml: string): ValueRow[] {
  const doc = parseDocument(valuesYaml);
  if (doc.errors.length > 0) throw new Error(`values.yaml: ${doc.errors[0]!.message}`);
  const rows: ValueRow[] = [];
  const walk = (pairs: Pair[], prefix: string, firstComment?: string | null) => {
    pairs.forEach((pair, index) => {
      const keyNode = pair.key as Node;
      const key = `${prefix}${String(isScalar(keyNode) ? keyNode.value : keyNode)}`;
      const node = pair.value as Node | null;
      const above = index === 0 ? firstComment : undefined;
      if (isMap(node) && !node.flow && node.items.length > 0) {
        const description = comment(above, keyNode.commentBefore, node.comment);
        if (description) rows.push({ key, type: 'object', default: '', description });
        walk(node.items as Pair[], `${key}.`, node.commentBefore);
        return;
      }
      const value = isAlias(node) ? node.resolve(doc as Document)?.toJSON() : (node?.toJSON() ?? null);
      const firstItem = isSeq(node) ? (node.items[0] as Node | undefined)?.commentBefore : undefined;
      const description = comment(above, keyNode.commentBefore, node?.commentBefore, node?.comment, firstItem);
      rows.push({ key, type: typeOf(value), default: defaultOf(value), description });
    });
  };
  if (!isMap(doc.contents)) throw new Error('values.yaml: the document is not a map');
  walk(doc.contents.items as Pair[], '');
  return rows;
}

export function valuesTable(valuesYaml: string): string {
  const lines = ['| Key | Type | Default | Description |', '|---|---|---|---|'];
  for (const row of valueRows(valuesYaml)) lines.push(`| \`${row.key}\` | ${row.type} | ${row.default} | ${row.description} |`);
  return lines.join('\n');
}

/** The README with its table between the markers replaced by the one values.yaml gives. */
export function withValuesTable(readme: string, valuesYaml: string): string {
  if (!MARKERS.test(readme)) throw new Error(`charts/didyma/README.md has lost its ${START} … ${END} markers.`);
  return readme.replace(MARKERS, () => `${START}\n${valuesTable(valuesYaml)}\n${END}`);
}

export function main(args: string[], root = new URL('../charts/didyma/', import.meta.url), print: (line: string) => void = console.error): number {
  const readmeFile = new URL('README.md', root);
  const readme = fs.readFileSync(readmeFile, 'utf8');
  const fresh = withValuesTable(readme, fs.readFileSync(new URL('values.yaml', root), 'utf8'));
  if (!args.includes('--check')) {
    fs.writeFileSync(readmeFile, fresh);
    return 0;
  }
  if (fresh === readme) return 0;
  print('charts/didyma/README.md: the values table is not what values.yaml says; run `npm run docs:chart`.');
  return 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2));
}
