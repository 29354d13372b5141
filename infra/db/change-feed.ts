import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';
import { listenConnectionOf, rootOf, serverUrlOf, type Db, type Runner, type ServerConnection } from './database.js';

/** What a cache on the request path may copy, or a stream follows; each topic is a set of announced tables. */
export type ChangeTopic = 'identity' | 'models' | 'invocations' | 'webhooks' | 'desired_state';

/** The channel every change notice goes out on: the migrations' triggers name it in their text. */
export const CHANGES_CHANNEL = 'didyma_changes';

const TOPIC_OF_TABLE: Record<'users' | 'workspaces' | 'memberships' | 'models' | 'invocations' | 'webhook_deliveries' | 'deployments' | 'storage_configs', ChangeTopic> = {
  // Announced by the triggers of migration 0005.
  users: 'identity',
  workspaces: 'identity',
  memberships: 'identity',
  models: 'models',
  // Announced by the one writer of invocation state after each commit (announceCommitted).
  invocations: 'invocations',
  // Announced by the deliveries store after the commit that queued them (announceCommitted).
  webhook_deliveries: 'webhooks',
  // Announced after each commit by the services that change what the cluster should hold.
  deployments: 'desired_state',
  storage_configs: 'desired_state',
};
const TOPICS: ChangeTopic[] = ['identity', 'models', 'invocations', 'webhooks', 'desired_state'];
/** A write statement knex is about to send, and its table. */
const WRITE = /^\s*(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+"?(\w+)"?/i;

/**
 * Generations of the cached topics. A topic's generation moves on every
 * change of one of its tables, as seen two ways:
 * - this process's own writes, the moment knex sends them, so a request that
 *   follows a change in the same process never sees the old value;
 * - PostgreSQL's notification after the commit (the 0005 triggers, and
 *   `announceCommitted` for invocations and deliveries), so every process learns of every
 *   change, whoever made it (on PostgreSQL; PGlite belongs to one process,
 *   whose own writes are all there is).
 * While the notification connection is down, `generation` is undefined and
 * caches read through: a change can never be missed, only not cached.
 */
export class ChangeFeed {
  private readonly generations = new Map<ChangeTopic, number>(TOPICS.map((topic) => [topic, 0]));
  private readonly subscribers = new Map<ChangeTopic, Set<() => void>>(TOPICS.map((topic) => [topic, new Set()]));
  private readonly keyed = new Map<ChangeTopic, Map<string, Set<() => void>>>(TOPICS.map((topic) => [topic, new Map()]));
  private readonly committed = new Map<ChangeTopic, Set<() => void>>(TOPICS.map((topic) => [topic, new Set()]));
  private listening = false;

  generation(topic: ChangeTopic): number | undefined {
    return this.listening ? this.generations.get(topic) : undefined;
  }

  /** Whether every change is seen as it happens; when not, a follower must poll. */
  get isListening(): boolean {
    return this.listening;
  }

  /** Calls `listener` on every change of the topic until the returned function is called. */
  subscribe(topic: ChangeTopic, listener: () => void): () => void {
    const listeners = this.subscribers.get(topic)!;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /**
   * Calls `listener` on every committed change of the topic, as announced
   * after its commit, and whenever announcements may have been missed (the
   * notification connection came or went), but never on this process's
   * uncommitted writes: a follower that writes the topic's tables itself is
   * not woken by its own writes.
   */
  subscribeCommitted(topic: ChangeTopic, listener: () => void): () => void {
    const listeners = this.committed.get(topic)!;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /**
   * Calls `listener` when the topic changes for `key` (a session, for
   * invocations), or as a whole, until the returned function is called:
   * a change of other keys costs it nothing.
   */
  subscribeKey(topic: ChangeTopic, key: string, listener: () => void): () => void {
    const byKey = this.keyed.get(topic)!;
    let listeners = byKey.get(key);
    if (!listeners) byKey.set(key, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (!listeners.size && byKey.get(key) === listeners) byKey.delete(key);
    };
  }

  /** A committed change of `table`: of the named keys only, or (without them) of everything in it. */
  tableChanged(table: string, keys?: readonly string[]): void {
    const topic = topicOf(table);
    if (topic) this.moved(topic, keys);
  }

  /**
   * A change this process is sending, not yet committed: the topic's caches
   * and whole-topic followers move; keyed followers wait for the
   * announcement after the commit, the first moment a read can see it.
   */
  tableWritten(table: string): void {
    const topic = topicOf(table);
    if (topic) this.moved(topic, []);
  }

  /** Whether notifications are arriving; every change of state starts all topics afresh. */
  setListening(listening: boolean): void {
    this.listening = listening;
    for (const topic of TOPICS) this.moved(topic);
  }

  private moved(topic: ChangeTopic, keys?: readonly string[]): void {
    this.generations.set(topic, (this.generations.get(topic) ?? 0) + 1);
    for (const listener of this.subscribers.get(topic)!) listener();
    if (keys === undefined || keys.length) for (const listener of [...this.committed.get(topic)!]) listener();
    const byKey = this.keyed.get(topic)!;
    const woken = keys === undefined ? [...byKey.values()] : keys.map((key) => byKey.get(key)).filter((set) => set !== undefined);
    for (const listeners of woken) for (const listener of [...listeners]) listener();
  }
}

const topicOf = (table: string): ChangeTopic | undefined => TOPIC_OF_TABLE[table as keyof typeof TOPIC_OF_TABLE];

/**
 * A notification's payload: a table, everything of it changed; or
 * `table:key,key,…`, those keys of it (announceCommitted).
 */
export function parseAnnouncement(payload: string): { table: string; keys?: string[] } {
  const colon = payload.indexOf(':');
  if (colon < 0) return { table: payload };
  return { table: payload.slice(0, colon), keys: payload.slice(colon + 1).split(',').filter(Boolean) };
}

interface Listener {
  stop(): Promise<void>;
}

interface Shared {
  feed: ChangeFeed;
  users: number;
  listener: Listener;
  onQuery: (query: { sql?: string }) => void;
}

const shared = new WeakMap<Db, Shared>();

/** The tables whose changes the application announces itself, after the commit, rather than a trigger inside it. */
export type AnnouncedAfterCommit = 'invocations' | 'webhook_deliveries' | 'deployments' | 'storage_configs';

/**
 * Announces a change of `table` made through `runner`, to the rows of `keys`
 * (the sessions whose invocations moved, the deployments or storage
 * configurations created or deleted) or, without keys, to the table as a
 * whole, once it is committed: at once for a statement outside a
 * transaction, after the commit for one inside. Every process, this one too,
 * hears it on the change channel; on PGlite this process's feed is all there
 * is. A NOTIFY sent inside the writing transaction would take PostgreSQL's
 * database-wide notification lock through that transaction's commit, so
 * every such commit would wait for the one before it (docs/decisions.md); an
 * announcement lost with its process costs a follower its poll, never an
 * event.
 */
export function announceCommitted(runner: Runner, table: AnnouncedAfterCommit, keys?: readonly string[]): void {
  const db = rootOf(runner);
  if (!db || keys?.length === 0) return;
  const announce = () => (serverUrlOf(db) ? announcerOf(db).add(table, keys) : shared.get(db)?.feed.tableChanged(table, keys));
  if (runner.isTransaction) (runner as Knex.Transaction).executionPromise.then(announce, () => undefined);
  else announce();
}

const announcers = new WeakMap<Db, Announcer>();

function announcerOf(db: Db): Announcer {
  let announcer = announcers.get(db);
  if (!announcer) announcers.set(db, (announcer = new Announcer((payloads) => db.raw(ANNOUNCE_SQL, [CHANGES_CHANNEL, payloads]))));
  return announcer;
}

/**
 * The notifications of one process: at most one statement every `gapMs`, the
 * changes announced meanwhile together in the next; the first after a quiet
 * spell goes at once. Each NOTIFY wakes every listening backend, about 160 µs
 * of PostgreSQL's CPU with four processes listening (docs/benchmarks.md), and
 * a drain changes invocations a thousand times a second. Each is a
 * transaction of its own that needs no flush to disk: a notification lost in
 * a crash of the server is lost with every listener's connection anyway.
 *
 * A statement names the keys that changed, in payloads under PostgreSQL's
 * 8000-byte limit, at most MAX_PAYLOADS of them: past that, its table alone,
 * which every follower of the table reads as "everything moved".
 */
export class Announcer {
  /** Per table, the keys changed since the last statement, or 'all' when too many did. */
  private readonly pending = new Map<AnnouncedAfterCommit, Set<string> | 'all'>();
  private pendingBytes = 0;
  private sending = false;
  private lastSentAt = -Infinity;

  constructor(
    private readonly notify: (payloads: string[]) => Promise<unknown>,
    private readonly gapMs = ANNOUNCE_GAP_MS,
  ) {}

  /** Keys of `table` changed, or all of it without them. */
  add(table: AnnouncedAfterCommit, keys?: readonly string[]): void {
    let changed = this.pending.get(table);
    if (keys === undefined) this.pending.set(table, (changed = 'all'));
    else if (changed === undefined) this.pending.set(table, (changed = new Set()));
    if (changed !== 'all' && keys) {
      for (const key of keys) {
        if (changed.has(key)) continue;
        changed.add(key);
        this.pendingBytes += Buffer.byteLength(key) + 1;
      }
      if (this.pendingBytes > MAX_PAYLOADS * MAX_PAYLOAD_BYTES) this.pending.set(table, 'all');
    }
    if (!this.sending) void this.send();
  }

  private async send(): Promise<void> {
    this.sending = true;
    while (this.pending.size) {
      const wait = this.lastSentAt + this.gapMs - performance.now();
      if (wait > 0) await sleep(wait);
      const payloads = [...this.pending].flatMap(([table, keys]) => payloadsOf(table, keys));
      this.pending.clear();
      this.pendingBytes = 0;
      this.lastSentAt = performance.now();
      await this.notify(payloads).catch(() => undefined);
    }
    this.sending = false;
  }
}

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; the table's name and a margin fit beside the keys. */
const MAX_PAYLOAD_BYTES = 7800;
/** The most notifications one statement sends for a table before it announces the whole table instead. */
const MAX_PAYLOADS = 4;

/** `table:k1,k2,…` payloads of at most MAX_PAYLOAD_BYTES of keys each; the table alone when there are too many. */
export function payloadsOf(table: string, keys: Set<string> | 'all'): string[] {
  if (keys === 'all') return [table];
  const payloads: string[] = [];
  let chunk: string[] = [];
  let bytes = 0;
  for (const key of keys) {
    if (bytes + Buffer.byteLength(key) + 1 > MAX_PAYLOAD_BYTES && chunk.length) {
      payloads.push(`${table}:${chunk.join(',')}`);
      chunk = [];
      bytes = 0;
    }
    chunk.push(key);
    bytes += Buffer.byteLength(key) + 1;
  }
  if (chunk.length) payloads.push(`${table}:${chunk.join(',')}`);
  return payloads.length > MAX_PAYLOADS ? [table] : payloads;
}

/** What an event stream may wait, at most, for the announcement of a change made by another process. */
const ANNOUNCE_GAP_MS = 5;

const ANNOUNCE_SQL = `select set_config('synchronous_commit', 'off', true), pg_notify(?, t) from unnest(?::text[]) as t`;

/**
 * The change feed of a database, shared by every platform built on the same
 * knex instance (tests build several over one). Release it when done: the
 * last release closes the notification connection.
 */
export function acquireChangeFeed(db: Db, logger: Logger): ChangeFeed {
  let entry = shared.get(db);
  if (!entry) {
    const feed = new ChangeFeed();
    const onQuery = (query: { sql?: string }) => {
      const table = WRITE.exec(query.sql ?? '')?.[1];
      if (table) feed.tableWritten(table);
    };
    db.on('query', onQuery);
    entry = { feed, users: 0, listener: listen(db, feed, logger), onQuery };
    shared.set(db, entry);
  }
  entry.users += 1;
  return entry.feed;
}

export async function releaseChangeFeed(db: Db): Promise<void> {
  const entry = shared.get(db);
  if (!entry || --entry.users > 0) return;
  shared.delete(db);
  db.off('query', entry.onQuery);
  await entry.listener.stop();
}

/**
 * PostgreSQL: a LISTEN connection of its own, or none when it is off (the
 * feed then never listens, and followers poll). The embedded PGlite is one
 * process's alone, so every change is that process's own write, which the
 * query hook sees: there is nothing else to listen to.
 */
function listen(db: Db, feed: ChangeFeed, logger: Logger): Listener {
  const connection = listenConnectionOf(db);
  if (connection) return new PostgresListener(connection, feed, logger);
  if (serverUrlOf(db)) return { stop: async () => undefined };
  feed.setListening(true);
  return {
    async stop() {
      feed.setListening(false);
    },
  };
}

/** One dedicated connection (not from the pool) that LISTENs, reconnecting with backoff. */
class PostgresListener implements Listener {
  private client: pg.Client | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private delayMs = 200;

  constructor(
    private readonly connection: ServerConnection,
    private readonly feed: ChangeFeed,
    private readonly logger: Logger,
  ) {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // keepAlive: a silently dropped connection must be noticed, or changes would go unseen.
    const client = new pg.Client({ ...this.connection, keepAlive: true });
    this.client = client;
    client.on('notification', (message) => {
      const { table, keys } = parseAnnouncement(message.payload ?? '');
      this.feed.tableChanged(table, keys);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`listen ${CHANGES_CHANNEL}`);
      if (this.stopped || this.client !== client) return;
      this.delayMs = 200;
      this.feed.setListening(true);
    } catch (error) {
      this.logger.debug({ err: error }, 'change notifications: could not listen yet');
      this.lost(client);
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.feed.setListening(false);
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.connect(), this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(this.delayMs * 2, 5000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.feed.setListening(false);
    await client?.end().catch(() => undefined);
  }
}
