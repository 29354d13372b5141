import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';

/** Who made a request: a signed-in user, an API token, an OAuth client (its service user), or nobody known; `platform` for what didyma did by itself. */
export type ActorType = 'user' | 'api_token' | 'oauth_client' | 'anonymous' | 'platform';

export interface AuditRow {
  id: string;
  created_at: Date;
  actor_type: ActorType;
  actor_user_id: number | null;
  /** The API token's id or the OAuth client's client_id; never a secret. */
  actor_id: string | null;
  workspace_id: number | null;
  action: string;
  method: string;
  /** The request path, its secret parameters redacted. */
  path: string;
  resource_type: string | null;
  resource_id: string | null;
  outcome: number;
  request_id: string;
  /** Null until the platform traces requests (OpenTelemetry). */
  trace_id: string | null;
  source_address: string | null;
  /** Records of the same source address and action the flood limit dropped before this one. */
  suppressed: number;
}

/** `created_at`: when the answer was known, to the microsecond (records of one batch keep their order). */
export type NewAuditRecord = Omit<AuditRow, 'created_at'> & { created_at: string };

/** What a list of records is narrowed to; `workspaceId` is the tenancy scope (absent: staff, every workspace). */
export interface AuditFilter {
  workspaceId?: number;
  actorUserId?: number;
  action?: string;
  resourceType?: string;
  resourceId?: string;
}

/** Every query of `audit_records`: insert, page, and the retention purge; nothing updates a record. */
export interface AuditStore {
  append(db: Runner, records: NewAuditRecord[]): Promise<void>;
  page(db: Runner, filter: AuditFilter, page: Page): Promise<PageOfRows<AuditRow>>;
  removeBefore(db: Runner, cutoff: Date, limit: number): Promise<number>;
}

const records = (db: Runner) => db<AuditRow>('audit_records');

export const auditStore: AuditStore = {
  async append(db, rows) {
    if (rows.length === 0) return;
    // An OAuth client acts as its service user: its client_id is looked up as the record goes in.
    const withClients = rows.map((row) =>
      row.actor_type === 'oauth_client' && row.actor_id === null && row.actor_user_id !== null
        ? { ...row, actor_id: db.raw('(select client_id from oauth_applications where service_user_id = ?)', [row.actor_user_id]) }
        : row,
    );
    await db('audit_records').insert(withClients);
  },

  page(db, filter, page) {
    const query = records(db);
    if (filter.workspaceId !== undefined) query.where('workspace_id', filter.workspaceId);
    if (filter.actorUserId !== undefined) query.where('actor_user_id', filter.actorUserId);
    if (filter.action !== undefined) query.where('action', filter.action);
    if (filter.resourceType !== undefined) query.where('resource_type', filter.resourceType);
    if (filter.resourceId !== undefined) query.where('resource_id', filter.resourceId);
    return keysetPage<AuditRow>(query, page, { table: 'audit_records', idType: 'uuid' });
  },

  async removeBefore(db, cutoff, limit) {
    const old = records(db).where('created_at', '<', cutoff).orderBy('created_at').limit(limit).select('id');
    return records(db).whereIn('id', old).delete();
  },
};
