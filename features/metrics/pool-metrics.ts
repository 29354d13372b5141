import { Gauge, Histogram, Registry } from 'prom-client';
import { serverUrlOf, type Db } from '../../infra/db/database.js';
import { metricNames } from './names.js';

/** The public side of knex's tarn pool that the figures read. */
interface ConnectionPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  on(event: 'acquireRequest' | 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void): void;
}

// From a free connection (well under a millisecond) to knex's acquire timeout (5 s).
const WAIT_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** knex's pool of a database, as it is now: none once destroyed. */
function poolOf(db: Db): ConnectionPool | undefined {
  const pool = (db.client as { pool?: Partial<ConnectionPool> }).pool;
  return typeof pool?.numPendingAcquires === 'function' ? (pool as ConnectionPool) : undefined;
}

/**
 * The connections of a database's pool, read from knex's pool at each scrape,
 * and the waits for one, timed from the pool's acquire events. One set per
 * database, however many platforms share it (tests build dozens on one).
 */
class DatabasePoolMetrics {
  readonly registry = new Registry();
  private readonly watched = new WeakSet<ConnectionPool>();
  private readonly waits = new Histogram({
    name: metricNames.dbPoolAcquireWait,
    help: 'Seconds a query waited for a connection of the pool, timeouts included.',
    buckets: WAIT_BUCKETS,
    registers: [this.registry],
  });

  constructor(private readonly db: Db) {
    this.current();
    const read = (figure: (pool: ConnectionPool) => number) => () => {
      const pool = this.current();
      return pool ? figure(pool) : 0;
    };
    const used = read((pool) => pool.numUsed());
    const free = read((pool) => pool.numFree());
    new Gauge({
      name: metricNames.dbPoolConnections,
      help: 'Connections of the pool by state: used (lent to a query or transaction) and free (open, idle).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        this.set({ state: 'used' }, used());
        this.set({ state: 'free' }, free());
      },
    });
    this.gauge(metricNames.dbPoolPendingAcquires, 'Queries waiting for a connection of the pool.', read((pool) => pool.numPendingAcquires()));
    this.gauge(metricNames.dbPoolPendingCreates, 'Connections the pool is opening.', read((pool) => pool.numPendingCreates()));
    const max = Number((db.client.config as { pool?: { max?: number } }).pool?.max ?? 0);
    this.gauge(metricNames.dbPoolMax, 'The most connections the pool opens (DATABASE_POOL_MAX).', () => max);
  }

  private gauge(name: string, help: string, value: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(value());
      },
    });
  }

  /** The pool now, its acquires timed from the first time it is seen (knex makes a new one if the database is destroyed and used again). */
  private current(): ConnectionPool | undefined {
    const pool = poolOf(this.db);
    if (pool && !this.watched.has(pool)) {
      this.watched.add(pool);
      this.timeAcquires(pool);
    }
    return pool;
  }

  private timeAcquires(pool: ConnectionPool): void {
    const requested = new Map<number, bigint>();
    const settled = (eventId: number) => {
      const start = requested.get(eventId);
      if (start === undefined) return;
      requested.delete(eventId);
      this.waits.observe(Number(process.hrtime.bigint() - start) / 1e9);
    };
    pool.on('acquireRequest', (eventId) => requested.set(eventId, process.hrtime.bigint()));
    pool.on('acquireSuccess', settled);
    pool.on('acquireFail', settled);
  }
}

const byDatabase = new WeakMap<Db, DatabasePoolMetrics>();

/** The pool figures of a PostgreSQL database; none for the embedded PGlite, whose single connection is no pool to size. */
export function databasePoolRegistry(db: Db): Registry | undefined {
  if (serverUrlOf(db) === undefined) return undefined;
  let metrics = byDatabase.get(db);
  if (!metrics) byDatabase.set(db, (metrics = new DatabasePoolMetrics(db)));
  return metrics.registry;
}
