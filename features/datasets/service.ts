import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Db } from '../../infra/db/database.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { Page } from '../../infra/http/pagination.js';
import { datasetObjectKey } from '../../infra/storage/object-key.js';
import type { StorageBackend } from '../../infra/storage/backend.js';
import type { ModelCatalogService } from '../models/catalog.service.js';
import type { StorageConfigsService } from '../files/storage.service.js';
import type { StorageConfigsStore } from '../files/store.js';
import type { InvocationsStore, SelectedSession, SessionsStore } from '../invocations/store.js';
import { sessionRecords, type DatasetRecord } from './records.js';
import { MANIFEST_FILE, manifestOf, presentDataset, RECORDS_FILE, RECORDS_MEDIA_TYPE } from './present.js';
import type { DatasetRow, DatasetsStore, StoredDataset, Selection } from './store.js';
import type { WebhooksService } from '../webhooks/service.js';

export interface ExportTarget {
  storage_key: string;
  name?: string;
}

export interface ExportFilter {
  model_code?: string;
  model_version?: string;
  created_after?: string;
  created_before?: string;
  with_feedback?: boolean;
}

interface Written {
  size: number;
  sha256: string;
  rowCount: number;
}

/**
 * Exports the caller's closed sessions as dataset versions: JSON Lines of
 * records plus a manifest, written once into a storage configuration of the
 * workspace. Only the caller sees, lists and downloads their datasets.
 */
export class DatasetsService {
  constructor(
    private readonly db: Db,
    private readonly stores: {
      datasets: DatasetsStore;
      storageConfigs: Pick<StorageConfigsStore, 'byId'>;
      sessions: Pick<SessionsStore, 'ofUser' | 'closedOfUser'>;
      invocations: Pick<InvocationsStore, 'allInSession'>;
    },
    private readonly models: ModelCatalogService,
    private readonly storage: StorageConfigsService,
    private readonly settings: { maxBytes: number },
    private readonly webhooks: Pick<WebhooksService, 'queueDatasetExported'>,
  ) {}

  /** One closed session of the caller; 409 while it is OPEN. */
  async exportSession(principal: Principal, code: string, version: string, sessionId: string, target: ExportTarget) {
    const model = await this.models.forReading(principal, code, version);
    const session = await this.stores.sessions.ofUser(this.db, sessionId, model.id, principal.user.id);
    if (!session) throw new NotFoundError('Session not found.');
    if (session.state !== 'CLOSED') throw new ConflictError('Only a CLOSED session can be exported; close it first.', 'session_open');
    const selection: Selection = { kind: 'session', session_id: session.id, model_code: model.model_code, model_version: model.version };
    return this.write(principal, target.name ?? `session-${session.id}`, target.storage_key, selection, [{ id: session.id, model_code: model.model_code, version: model.version }]);
  }

  /** Every closed session of the caller matching the filter; records restricted by date and feedback. */
  async exportFiltered(principal: Principal, name: string, storageKey: string, filter: ExportFilter) {
    if (filter.model_version && !filter.model_code) throw new InputError('model_version: give model_code with it.');
    const after = filter.created_after ? Date.parse(filter.created_after) : undefined;
    const before = filter.created_before ? Date.parse(filter.created_before) : undefined;
    if (after !== undefined && before !== undefined && after >= before) throw new InputError('created_after: must be earlier than created_before.');
    const sessions = await this.stores.sessions.closedOfUser(this.db, principal.workspace!.id, principal.user.id, filter);
    const keep = (record: DatasetRecord) => {
      const at = Date.parse(record.created_at);
      return (after === undefined || at >= after) && (before === undefined || at < before) && (!filter.with_feedback || record.feedback.length > 0);
    };
    return this.write(principal, name, storageKey, { kind: 'filter', ...filter }, sessions, keep);
  }

  async list(principal: Principal, page: Page, name?: string) {
    const { id: workspaceId, name: workspace } = principal.workspace!;
    const { rows, total, next } = await this.stores.datasets.pageOfUser(this.db, workspaceId, principal.user.id, page, name);
    return { items: rows.map((row) => presentDataset(row, workspace)), total, next };
  }

  async get(principal: Principal, id: string) {
    return presentDataset(await this.ofCaller(principal, id), principal.workspace!.name);
  }

  /** The stored JSON Lines file or manifest of one of the caller's datasets. */
  async open(principal: Principal, id: string, part: 'records' | 'manifest') {
    const row = await this.ofCaller(principal, id);
    const config = (await this.stores.storageConfigs.byId(this.db, row.storage_config_id))!;
    const download = await this.storage.backendOf(config).get(part === 'records' ? row.object_key : row.manifest_object_key);
    const fileName = part === 'records' ? `${row.name}-v${row.version}.jsonl` : `${row.name}-v${row.version}.manifest.json`;
    return { fileName, contentType: part === 'records' ? RECORDS_MEDIA_TYPE : 'application/json', stream: download.stream, size: download.size };
  }

  private async ofCaller(principal: Principal, id: string): Promise<StoredDataset> {
    const row = await this.stores.datasets.ofUser(this.db, principal.workspace!.id, principal.user.id, id);
    if (!row) throw new NotFoundError('Dataset not found.');
    return row;
  }

  /** Writes the records, then the manifest, then the row; a version whose row cannot be written leaves no file behind. */
  private async write(principal: Principal, name: string, storageKey: string, selection: Selection, sessions: SelectedSession[], keep: (record: DatasetRecord) => boolean = () => true) {
    const workspace = principal.workspace!;
    const config = await this.storage.live(principal, storageKey);
    const backend = this.storage.backendOf(config);
    const version = await this.stores.datasets.nextVersion(this.db, workspace.id, principal.user.id, name);
    const id = crypto.randomUUID();
    const objectKey = datasetObjectKey(workspace.id, id, RECORDS_FILE);
    const manifestKey = datasetObjectKey(workspace.id, id, MANIFEST_FILE);
    try {
      const written = await this.writeRecords(backend, objectKey, workspace.id, sessions, keep);
      const row: DatasetRow = {
        id,
        workspace_id: workspace.id,
        created_by_id: principal.user.id,
        storage_config_id: config.id,
        name,
        version,
        selection,
        object_key: objectKey,
        manifest_object_key: manifestKey,
        row_count: written.rowCount,
        size: written.size,
        sha256: written.sha256,
        created_at: new Date(),
      };
      const manifest = manifestOf(row, workspace.name);
      await backend.put(manifestKey, Readable.from([manifest]), { contentType: 'application/json', maxBytes: manifest.length });
      const dataset = presentDataset({ ...row, storage_key: config.storage_key }, workspace.name);
      // The dataset and its webhook deliveries commit together, or neither does.
      await this.db.transaction(async (trx) => {
        await this.stores.datasets.insert(trx, row);
        await this.webhooks.queueDatasetExported(trx, workspace.id, dataset);
      });
      return dataset;
    } catch (error) {
      await Promise.all([backend.remove(objectKey), backend.remove(manifestKey)]).catch(() => undefined);
      if ((error as { code?: string }).code === '23505') throw new ConflictError(`Another export of "${name}" took version ${version}; export again for the next one.`);
      throw error;
    }
  }

  private async writeRecords(backend: StorageBackend, objectKey: string, workspaceId: number, sessions: SelectedSession[], keep: (record: DatasetRecord) => boolean): Promise<Written> {
    let rowCount = 0;
    const { db, stores } = this;
    // One session's invocations at a time: the file streams to storage without holding the whole selection.
    async function* lines() {
      for (const session of sessions) {
        const rows = await stores.invocations.allInSession(db, workspaceId, session.id);
        for (const record of sessionRecords(session, rows)) {
          if (!keep(record)) continue;
          rowCount += 1;
          yield Buffer.from(`${JSON.stringify(record)}\n`);
        }
      }
    }
    const stored = await backend.put(objectKey, Readable.from(lines()), { contentType: RECORDS_MEDIA_TYPE, maxBytes: this.settings.maxBytes });
    return { ...stored, rowCount };
  }
}
