import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';

/** What an endpoint may receive. */
export const WEBHOOK_EVENTS = ['invocation.completed', 'invocation.failed', 'invocation.cancelled', 'dataset.exported', 'alias.rolled_back'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface EndpointRow {
  id: number;
  workspace_id: number;
  url: string;
  description: string;
  events: WebhookEvent[];
  /** `whsec_…` sealed by the platform's SecretBox; never presented. */
  secret_sealed: string;
  enabled: boolean;
  created_by_id: number | null;
  created_at: Date;
  updated_at: Date;
}

export type NewEndpointRow = Pick<EndpointRow, 'workspace_id' | 'url' | 'description' | 'events' | 'secret_sealed' | 'enabled' | 'created_by_id'>;
export type EndpointChanges = Partial<Pick<EndpointRow, 'url' | 'description' | 'events' | 'secret_sealed' | 'enabled'>>;

/** Every query of `webhook_endpoints`. */
export interface WebhookEndpointsStore {
  /** Inserts it unless its workspace has `max` endpoints already: undefined then. Exact across processes. */
  insertWithin(db: Runner, row: NewEndpointRow, max: number): Promise<EndpointRow | undefined>;
  inWorkspace(db: Runner, workspaceId: number, id: number): Promise<EndpointRow | undefined>;
  /** A page of the workspace's endpoints, newest first. */
  pageInWorkspace(db: Runner, workspaceId: number, page: Page): Promise<PageOfRows<EndpointRow>>;
  /** The enabled endpoints of a workspace, for the callback URLs they allow. */
  enabledInWorkspace(db: Runner, workspaceId: number): Promise<Array<Pick<EndpointRow, 'id' | 'url'>>>;
  /** Undefined when it is not the workspace's. */
  update(db: Runner, workspaceId: number, id: number, changes: EndpointChanges): Promise<EndpointRow | undefined>;
  /** Deletes it with its deliveries; how many rows went (0 or 1). */
  remove(db: Runner, workspaceId: number, id: number): Promise<number>;
}

const ofWorkspace = (db: Runner, workspaceId: number) => db<EndpointRow>('webhook_endpoints').where({ workspace_id: workspaceId });

/** With a workspace id, serializes the registrations of that workspace's endpoints. */
const ENDPOINTS_LOCK = 0x64697765;

/** JSON columns are written as text (PGlite and pg alike). */
const writable = <T extends { events?: WebhookEvent[] }>(row: T) => (row.events ? { ...row, events: JSON.stringify(row.events) } : row);

export const webhookEndpointsStore: WebhookEndpointsStore = {
  insertWithin: (db, row, max) =>
    db.transaction(async (trx) => {
      // Two registrations at once must not both see room for one.
      await trx.raw('select pg_advisory_xact_lock(?::integer, ?::integer)', [ENDPOINTS_LOCK, row.workspace_id]);
      const [counted] = (await ofWorkspace(trx, row.workspace_id).count({ n: '*' })) as Array<{ n: string | number }>;
      if (Number(counted?.n ?? 0) >= max) return undefined;
      return (await trx<EndpointRow>('webhook_endpoints').insert(writable(row) as never).returning('*'))[0] as EndpointRow;
    }),
  inWorkspace: (db, workspaceId, id) => ofWorkspace(db, workspaceId).where({ id }).first(),
  pageInWorkspace: (db, workspaceId, page) => keysetPage<EndpointRow>(ofWorkspace(db, workspaceId), page, { table: 'webhook_endpoints', idType: 'integer' }),
  enabledInWorkspace: (db, workspaceId) => ofWorkspace(db, workspaceId).where({ enabled: true }).orderBy('id').select('id', 'url'),
  update: async (db, workspaceId, id, changes) =>
    (await ofWorkspace(db, workspaceId).where({ id }).update({ ...writable(changes), updated_at: db.fn.now() } as never).returning('*'))[0] as EndpointRow | undefined,
  // The ids, not knex's count: on PGlite a delete answers its result object.
  remove: async (db, workspaceId, id) => (await ofWorkspace(db, workspaceId).where({ id }).delete(['id'])).length,
};
