import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Db, Runner } from '../../infra/db/database.js';
import { MicroBatch } from '../../infra/db/micro-batch.js';
import { deleteInBatches } from '../../infra/db/purge.js';
import type { TaskDefinition } from '../../infra/process/scheduler.js';
import type { Page } from '../../infra/db/keyset.js';
import type { ListPage } from '../../infra/http/pagination.js';
import { NotAllowedError, NotFoundError } from '../../kernel/errors/errors.js';
import { isStaff, isSupervisor, type Principal } from '../auth/principal.js';
import { FloodLimit } from './flood-limit.js';
import { presentAuditRecord, type AuditRecordView } from './present.js';
import type { AuditFilter, AuditStore, NewAuditRecord } from './store.js';

export type AuditEntry = Omit<NewAuditRecord, 'id' | 'suppressed' | 'created_at'>;

export interface AuditOptions {
  /** Records of refused requests kept per source address and action per minute. */
  refusedPerMinute: number;
  retentionMs: number;
}

/** Records gather this long before they go in as one insert: a busy server writes one statement per batch. */
const GATHER_MS = 20;
const PURGE_EVERY_MS = 60_000;
const PURGE_BATCH = 5000;

/**
 * A refused request (401, 403) or an anonymous caller's failure (a failed
 * login, a bad invitation token): what a flood is made of, so these are
 * limited; the changes of an authenticated caller are always kept.
 */
export const isRefusal = (entry: Pick<AuditEntry, 'outcome' | 'actor_type'>) =>
  entry.outcome === 401 || entry.outcome === 403 || (entry.actor_type === 'anonymous' && entry.outcome >= 400);

/**
 * The audit trail: appends a record per audited request (batched, after the
 * answer is known), lists them to supervisors and staff, and purges them
 * after the retention. Nothing here changes a record.
 */
export class AuditTrail {
  private readonly flood: FloodLimit;
  private readonly writes: MicroBatch<NewAuditRecord, undefined>;

  constructor(
    private readonly db: Db,
    private readonly store: AuditStore,
    private readonly options: AuditOptions,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.flood = new FloodLimit(options.refusedPerMinute, now);
    this.writes = new MicroBatch(
      async (rows) => {
        await store.append(db, rows);
        return rows.map(() => undefined);
      },
      { gatherMs: GATHER_MS, maxItems: 500 },
    );
  }

  /** Records dropped by the flood limit since the process started. */
  get dropped(): number {
    return this.flood.droppedTotal;
  }

  /** Appends the record, unless the flood limit drops it; a failed write is logged with the record, which the log then keeps. */
  record(entry: AuditEntry): void {
    const suppressed = isRefusal(entry) ? this.flood.admit(`${entry.source_address}\u0000${entry.action}`) : 0;
    if (suppressed === undefined) return;
    const row: NewAuditRecord = { id: crypto.randomUUID(), created_at: microsecondsNow(), ...entry, suppressed };
    this.writes.add(row).catch((error: unknown) => this.logger.error({ err: error, audit: row }, 'could not write an audit record'));
  }

  /** Appends the record in the caller's transaction: for what the platform did by itself, recorded exactly when it commits. */
  async recordIn(tx: Runner, entry: AuditEntry): Promise<void> {
    await this.store.append(tx, [{ id: crypto.randomUUID(), created_at: microsecondsNow(), ...entry, suppressed: 0 }]);
  }

  /** Resolves once every record handed in so far is written (shutdown, tests). */
  drain(): Promise<void> {
    return this.writes.drain();
  }

  /** Staff read every workspace's records, a supervisor only its own workspace's. */
  async list(principal: Principal, filter: Omit<AuditFilter, 'workspaceId'> & { workspaceId?: number }, page: Page): Promise<ListPage<AuditRecordView>> {
    const scoped = { ...filter, ...scopeOf(principal, filter.workspaceId) };
    const found = await this.store.page(this.db, scoped, page);
    return { items: found.rows.map(presentAuditRecord), total: found.total, ...(found.next && { next: found.next }) };
  }

  /** A background task of its own: records older than the retention go, once a minute and a few batches at a time. */
  purgeTask(): TaskDefinition {
    return {
      name: 'audit_record_purge',
      intervalMs: PURGE_EVERY_MS,
      run: () => deleteInBatches((limit) => this.store.removeBefore(this.db, new Date(this.now() - this.options.retentionMs), limit), PURGE_BATCH),
    };
  }
}

/** Now, as an ISO instant to the microsecond: a batch's records would otherwise share the insert's now(). */
function microsecondsNow(): string {
  const micros = Math.round((performance.timeOrigin + performance.now()) * 1000);
  return new Date(Math.floor(micros / 1000)).toISOString().replace('Z', `${String(micros % 1000).padStart(3, '0')}Z`);
}

/** The workspaces a caller may read: all for staff (or the one asked for), its own for a supervisor. */
function scopeOf(principal: Principal, asked: number | undefined): Pick<AuditFilter, 'workspaceId'> {
  if (isStaff(principal)) return asked === undefined ? {} : { workspaceId: asked };
  if (!principal.workspace || !isSupervisor(principal)) throw new NotAllowedError('Only supervisors and staff may read the audit trail.');
  // Another workspace's records are another workspace's data: a 404, as everywhere else.
  if (asked !== undefined && asked !== principal.workspace.id) throw new NotFoundError('Workspace not found.');
  return { workspaceId: principal.workspace.id };
}
