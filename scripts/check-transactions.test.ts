import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';
import { findNetworkCallsInTransactions } from './check-transactions.js';

const ROOT = path.resolve(fileURLToPath(new URL('..', import.meta.url)));

/** The check over source files that exist only in memory, under features/ (so they import the project's real modules). */
function check(sources: Record<string, string>) {
  const files = Object.fromEntries(Object.entries(sources).map(([name, text]) => [path.join(ROOT, 'features', '__check__', name), text]));
  const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, skipLibCheck: true, noEmit: true, types: ['node'] };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) => (files[fileName] !== undefined ? ts.createSourceFile(fileName, files[fileName]!, language) : getSourceFile(fileName, language, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => files[fileName] !== undefined || fileExists(fileName);
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (dir) => dir === path.join(ROOT, 'features', '__check__') || (directoryExists?.(dir) ?? true);
  const program = ts.createProgram(Object.keys(files), options, host);
  return findNetworkCallsInTransactions(program, ROOT, Object.keys(files));
}

const IMPORTS = `
import type { Db } from '../../infra/db/database.js';
import type { DesiredStateWriter } from '../../infra/kube/writer.js';
import type { WorkQueue } from '../../infra/queue/queue.js';
import type { StorageBackend } from '../../infra/storage/backend.js';
import type { Desired } from '../../infra/kube/desired.js';
`;

describe('check-transactions: no network call inside db.transaction()', () => {
  it('flags a Kubernetes write, a queue publication, a storage call and fetch() in the callback', () => {
    const findings = check({
      'direct.ts': `${IMPORTS}
export async function create(db: Db, writer: DesiredStateWriter, queue: WorkQueue, backend: StorageBackend, item: Desired) {
  await db.transaction(async (trx) => {
    await trx('deployments').insert({});
    await writer.apply(item);
  });
  await db.transaction(async () => { await queue.close(); });
  await db.transaction(async () => { await backend.check(); });
  await db.transaction(async () => { await fetch('http://peer.example'); });
}`,
    });
    expect(findings.map((f) => f.line)).to.deep.equal([9, 13, 14, 15]);
    expect(findings[0]!.chain[0]).to.include('writer.apply()').and.include('infra/kube/writer.ts');
  });

  it("follows calls into the project's own functions and methods, and names the path", () => {
    const findings = check({
      'helper.ts': `${IMPORTS}
export function publish(writer: DesiredStateWriter, item: Desired) { return writer.apply(item); }
export class Service {
  constructor(private readonly writer: DesiredStateWriter) {}
  save(item: Desired) { return publish(this.writer, item); }
}`,
      'indirect.ts': `${IMPORTS}
import { Service } from './helper.js';
export async function create(db: Db, service: Service, item: Desired) {
  await db.transaction(async (trx) => {
    await trx.raw('select 1');
    await service.save(item);
  });
}`,
    });
    expect(findings).to.have.length(1);
    expect(findings[0]!.chain.map((step) => step.split('(')[0])).to.deep.equal(['service.save', 'publish', 'writer.apply']);
  });

  it('leaves database work in the transaction and network calls after it alone', () => {
    const findings = check({
      'after.ts': `${IMPORTS}
import { announceCommitted } from '../../infra/db/change-feed.js';
import { resourceName } from '../../infra/kube/names.js';
export async function create(db: Db, writer: DesiredStateWriter, item: Desired) {
  const row = await db.transaction(async (trx) => {
    const [created] = await trx('deployments').insert({ name: resourceName('deployment', 'w', 'k') }).returning('*');
    announceCommitted(trx, 'deployments', [String(created.id)]);
    return created;
  });
  await writer.apply(item);
  return row;
}`,
    });
    expect(findings).to.deep.equal([]);
  });
});
