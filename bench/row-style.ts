// What a store's row style costs per read: the same queries through knex,
// returning plain rows typed by interfaces, and through Objection model
// classes, which build an instance of the class per row. Run in turns, round
// after round, on one database; the figure is this process's CPU per read
// (user + system), which on PostgreSQL is the client's share alone: building
// the query, the driver and, for Objection, the instances. Nothing here is a
// test: no figure fails a build.
//
//   npx tsx bench/row-style.ts          (in-memory PGlite: the CPU includes the database)
//   eval "$(bash scripts/services/all.sh env postgres)" && npx tsx bench/row-style.ts
//
// Environment: TEST_DATABASE_URL (a scratch database is made there and dropped),
// BENCH_ROUNDS (7), BENCH_POINT_READS (2000), BENCH_PAGE_READS (200) per round.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { Model } from 'objection';
import { createDatabase, migrateLatest, type Db } from '../infra/db/database.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);
const POINT_READS = Number(process.env.BENCH_POINT_READS || 2000);
const PAGE_READS = Number(process.env.BENCH_PAGE_READS || 200);
const PAGE_SIZE = 100;

// The classes a store would declare for the two tables, as infra/db/models.ts did.
class ApiTokenModel extends Model {
  static override tableName = 'api_tokens';
}
class ModelModel extends Model {
  static override tableName = 'models';
  static override jsonAttributes = ['input_schema', 'output_schema', 'feedback_schema', 'native_metadata'];
}

interface Case {
  name: string;
  reads: number;
  rowsPerRead: number;
  knex: (db: Db) => PromiseLike<unknown>;
  objection: (db: Db) => PromiseLike<unknown>;
}

interface Sample {
  case: string;
  style: 'knex' | 'objection';
  round: number;
  cpuUsPerRead: number;
  wallUsPerRead: number;
}

async function main() {
  const started = new Date();
  const scratch = await openDatabase();
  const { db } = scratch;
  try {
    const fixture = await seed(db);
    const cases: Case[] = [
      {
        name: 'api token by hash (one row, every API-token request)',
        reads: POINT_READS,
        rowsPerRead: 1,
        knex: (d) => d('api_tokens').where({ token_hash: fixture.tokenHash }).first(),
        objection: (d) => ApiTokenModel.query(d).findOne({ token_hash: fixture.tokenHash }),
      },
      {
        name: `page of ${PAGE_SIZE} models (JSON schema columns)`,
        reads: PAGE_READS,
        rowsPerRead: PAGE_SIZE,
        knex: (d) => d('models').where({ workspace_id: fixture.workspaceId }).whereNull('deleted_at').orderBy('id', 'desc').limit(PAGE_SIZE),
        objection: (d) => ModelModel.query(d).where({ workspace_id: fixture.workspaceId }).whereNull('deleted_at').orderBy('id', 'desc').limit(PAGE_SIZE),
      },
    ];
    const samples: Sample[] = [];
    for (const c of cases) {
      await repeat(c.reads, () => c.knex(db)); // warm both paths and the database's caches
      await repeat(c.reads, () => c.objection(db));
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which style goes first, so a drift inside a round favours neither.
        const order: Array<'knex' | 'objection'> = round % 2 ? ['objection', 'knex'] : ['knex', 'objection'];
        for (const style of order) samples.push({ case: c.name, style, round, ...(await measure(c.reads, () => c[style](db))) });
      }
    }
    const summary = cases.map((c) => summarise(c, samples.filter((s) => s.case === c.name)));
    console.table(summary);
    const report = {
      started: started.toISOString(),
      database: scratch.kind,
      node: process.version,
      cpus: os.cpus().length,
      loadavg: os.loadavg(),
      rounds: ROUNDS,
      summary,
      samples,
    };
    const file = path.join('bench', 'results', `row-style-${started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}-${scratch.kind}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`written to ${file}`);
  } finally {
    await scratch.drop();
  }
}

async function repeat(times: number, read: () => PromiseLike<unknown>): Promise<void> {
  for (let i = 0; i < times; i++) await read();
}

async function measure(reads: number, read: () => PromiseLike<unknown>): Promise<{ cpuUsPerRead: number; wallUsPerRead: number }> {
  const cpu = process.cpuUsage();
  const wall = process.hrtime.bigint();
  await repeat(reads, read);
  const spent = process.cpuUsage(cpu);
  return { cpuUsPerRead: (spent.user + spent.system) / reads, wallUsPerRead: Number(process.hrtime.bigint() - wall) / 1000 / reads };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const round1 = (value: number) => Math.round(value * 10) / 10;

/** Medians per style, and the median of the per-round differences (Objection minus knex). */
function summarise(c: Case, samples: Sample[]) {
  const of = (style: Sample['style'], key: 'cpuUsPerRead' | 'wallUsPerRead') => samples.filter((s) => s.style === style).map((s) => s[key]);
  const perRound = (key: 'cpuUsPerRead' | 'wallUsPerRead') => of('objection', key).map((value, round) => value - of('knex', key)[round]!);
  const cpuDifference = median(perRound('cpuUsPerRead'));
  return {
    case: c.name,
    knexCpuUs: round1(median(of('knex', 'cpuUsPerRead'))),
    objectionCpuUs: round1(median(of('objection', 'cpuUsPerRead'))),
    objectionMinusKnexCpuUs: round1(cpuDifference),
    objectionMinusKnexCpuUsPerRow: round1(cpuDifference / c.rowsPerRead),
    knexWallUs: round1(median(of('knex', 'wallUsPerRead'))),
    objectionWallUs: round1(median(of('objection', 'wallUsPerRead'))),
  };
}

/** A workspace with one API token and a page's worth of models. */
async function seed(db: Db): Promise<{ workspaceId: number; tokenHash: string }> {
  const [user] = (await db('users').insert({ email: `bench-${crypto.randomUUID()}@didyma.local`, password_hash: null, name: 'Bench' }).returning('id')) as Array<{ id: number }>;
  const [workspace] = (await db('workspaces').insert({ name: `bench-${crypto.randomBytes(4).toString('hex')}`, created_by_id: user!.id }).returning('id')) as Array<{ id: number }>;
  const tokenHash = crypto.randomBytes(32).toString('hex');
  await db('api_tokens').insert({ name: 'bench', user_id: user!.id, workspace_id: workspace!.id, token_hash: tokenHash, expiration_date: '2999-12-31' });
  const [deployment] = (await db('deployments')
    .insert({ workspace_id: workspace!.id, deployment_key: `bench-${crypto.randomUUID()}`, registry_connector_class: 'r', registry_connector_init: '{}', server_proxy_class: 's', server_proxy_init: '{}' })
    .returning('id')) as Array<{ id: number }>;
  const schema = JSON.stringify({ type: 'object', properties: { sepal_length: { type: 'number' }, sepal_width: { type: 'number' } }, required: ['sepal_length'] });
  const models = Array.from({ length: PAGE_SIZE }, (_, i) => ({
    workspace_id: workspace!.id,
    model_code: `bench-${crypto.randomUUID()}`,
    version: String(i),
    name: `model ${i}`,
    description: 'a model of the row-style bench',
    input_schema: schema,
    output_schema: schema,
    native_metadata: JSON.stringify({ deployment_key: 'bench', registry: { stage: 'Production' } }),
    deployment_id: deployment!.id,
    chain_position: 0,
  }));
  await db('models').insert(models);
  return { workspaceId: workspace!.id, tokenHash };
}

async function openDatabase(): Promise<{ db: Db; kind: 'postgres' | 'pglite'; drop: () => Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const db = createDatabase({});
    await migrateLatest(db);
    return { db, kind: 'pglite', drop: () => db.destroy() };
  }
  const name = `dy_bench_rows_${crypto.randomBytes(4).toString('hex')}`;
  const admin: Knex = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  const db = createDatabase({ url: target.toString(), poolMax: 2 });
  await migrateLatest(db);
  return {
    db,
    kind: 'postgres',
    drop: async () => {
      await db.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

await main();
