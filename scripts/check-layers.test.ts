import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { FEATURES, checkLayers, importsOf, main } from './check-layers.js';

const roots: string[] = [];

/** A throw-away source tree: file path → file text. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-layers-'));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

/** The reasons the checker gives for a tree where `from` imports `to` (a path from the root). */
function reasonsFor(from: string, to: string, statement = (spec: string) => `import { x } from '${spec}';\n`): string[] {
  const spec = path.posix.relative(path.posix.dirname(from), to).replace(/^(?!\.)/, './').replace(/\.ts$/, '.js');
  return checkLayers(tree({ [from]: statement(spec), [to]: 'export const x = 1;\n' })).map((v) => v.reason);
}

const PROCESSES = ['api', 'executor', 'operator', 'cli', 'dashboard'];

describe('the import-layer check (scripts/check-layers.ts)', () => {
  after(() => {
    for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
  });

  it('refuses infra/ importing features/, platform/ or a process, and lets it import kernel/ and infra/', () => {
    for (const top of ['features/auth', 'platform', ...PROCESSES]) {
      expect(reasonsFor('infra/kube/a.ts', `${top}/b.ts`), top).to.deep.equal([`infra/ may not import ${top.split('/')[0]}/ (a layer above it)`]);
    }
    expect(reasonsFor('infra/kube/a.ts', 'kernel/errors/b.ts')).to.deep.equal([]);
    expect(reasonsFor('infra/kube/a.ts', 'infra/db/b.ts')).to.deep.equal([]);
  });

  it('refuses kernel/ importing anything above it', () => {
    for (const top of ['infra/db', 'features/auth', 'platform', ...PROCESSES]) {
      expect(reasonsFor('kernel/config/a.ts', `${top}/b.ts`), top).to.have.length(1);
    }
    expect(reasonsFor('kernel/config/a.ts', 'kernel/errors/b.ts')).to.deep.equal([]);
  });

  it('refuses features/ importing platform/ or a process, and lets it import infra/ and kernel/', () => {
    for (const top of ['platform', ...PROCESSES]) {
      expect(reasonsFor('features/models/a.ts', `${top}/b.ts`), top).to.deep.equal([`features/ may not import ${top}/ (a layer above it)`]);
    }
    expect(reasonsFor('features/models/a.ts', 'infra/db/b.ts')).to.deep.equal([]);
    expect(reasonsFor('features/models/a.ts', 'kernel/errors/b.ts')).to.deep.equal([]);
  });

  it('refuses platform/ importing a process, and lets it import every layer below', () => {
    for (const top of PROCESSES) expect(reasonsFor('platform/kube/a.ts', `${top}/b.ts`), top).to.have.length(1);
    for (const below of ['features/models', 'infra/kube', 'kernel/config']) expect(reasonsFor('platform/kube/a.ts', `${below}/b.ts`), below).to.deep.equal([]);
  });

  it('lets processes import each other and every layer, and leaves folders outside the layers alone', () => {
    expect(reasonsFor('cli/a.ts', 'executor/b.ts')).to.deep.equal([]);
    expect(reasonsFor('api/public/a.ts', 'platform/b.ts')).to.deep.equal([]);
    expect(reasonsFor('infra/db/a.test.ts', 'test/support/b.ts')).to.deep.equal([]);
    expect(reasonsFor('bench/a.ts', 'executor/b.ts')).to.deep.equal([]);
  });

  it('lets a feature import the features before it in the order, and refuses the ones after it', () => {
    const [first, second] = FEATURES;
    expect(reasonsFor(`features/${second}/a.ts`, `features/${first}/b.ts`)).to.deep.equal([]);
    expect(reasonsFor(`features/${first}/a.ts`, `features/${second}/b.ts`)).to.deep.equal([`features/${first}/ may not import features/${second}/ (after it in the feature order)`]);
    expect(reasonsFor(`features/${first}/a.ts`, `features/${first}/b.ts`)).to.deep.equal([]);
  });

  it('refuses an import from or to a feature folder the order does not name', () => {
    expect(reasonsFor('features/newsletter/a.ts', `features/${FEATURES[0]}/b.ts`)).to.deep.equal(['features/newsletter/ is not in the feature order (FEATURES in scripts/check-layers.ts)']);
    expect(reasonsFor(`features/${FEATURES.at(-1)}/a.ts`, 'features/newsletter/b.ts')).to.have.length(1);
  });

  it('sees type-only imports, re-exports, import() and import types, and test files like any other', () => {
    const statements = [
      (spec: string) => `import type { X } from '${spec}';\n`,
      (spec: string) => `import { type X } from '${spec}';\n`,
      (spec: string) => `export { x } from '${spec}';\n`,
      (spec: string) => `export * from '${spec}';\n`,
      (spec: string) => `export const load = () => import('${spec}');\n`,
      (spec: string) => `export type X = typeof import('${spec}');\n`,
      (spec: string) => `import '${spec}';\n`,
    ];
    for (const statement of statements) expect(reasonsFor('infra/a.ts', 'features/auth/b.ts', statement), statement('…')).to.have.length(1);
    expect(reasonsFor('infra/a.test.ts', 'features/auth/b.ts')).to.have.length(1);
  });

  it('ignores packages, comments, strings and node_modules', () => {
    const root = tree({
      'infra/a.ts': "import { Knex } from 'knex';\n// import x from '../features/auth/b.js';\nexport const s = \"from '../features/auth/b.js'\";\n",
      'infra/node_modules/p/index.ts': "import '../../../features/auth/b.js';\n",
      'features/auth/b.ts': 'export const x = 1;\n',
    });
    expect(checkLayers(root)).to.deep.equal([]);
  });

  it('names the file, the line and the import', () => {
    const root = tree({ 'infra/kube/rows.ts': "// rows\nimport type { Row } from '../../features/auth/store.js';\n" });
    expect(checkLayers(root)).to.deep.equal([
      { file: 'infra/kube/rows.ts', line: 2, specifier: '../../features/auth/store.js', reason: 'infra/ may not import features/ (a layer above it)' },
    ]);
    expect(importsOf('x.ts', "import a from './a.js';\n\nexport * from './b.js';\n")).to.deep.equal([
      { specifier: './a.js', line: 1 },
      { specifier: './b.js', line: 3 },
    ]);
  });

  it('finds no import against the order in this repository', () => {
    expect(checkLayers(fileURLToPath(new URL('..', import.meta.url)))).to.deep.equal([]);
  });

  it('exits non-zero naming each import against the order, and 0 when there is none', () => {
    const lines: string[] = [];
    expect(main(tree({ 'features/auth/a.ts': "import { x } from '../../api/b.js';\n", 'api/b.ts': 'export const x = 1;\n' }), (line) => lines.push(line))).to.equal(1);
    expect(lines[0]).to.equal("features/auth/a.ts:1: import '../../api/b.js': features/ may not import api/ (a layer above it)");
    expect(main(tree({ 'api/a.ts': "import { x } from '../features/auth/b.js';\n", 'features/auth/b.ts': 'export const x = 1;\n' }), () => expect.fail('printed'))).to.equal(0);
  });
});
