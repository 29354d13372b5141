import crypto from 'node:crypto';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import type { Db } from '../../infra/db/database.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { Page } from '../../infra/http/pagination.js';
import { datasetObjectKey } from '../../infra/storage/object-key.js';
import type { ObjectDownload, StorageBackend } from '../../infra/storage/backend.js';
import type { ModelCatalogService } from '../models/catalog.service.js';
import type { StorageConfigsService } from '../files/storage.service.js';
import type { StorageConfigsStore } from '../files/store.js';
import type { InvocationsStore, SelectedSession, SessionsStore } from '../invocations/store.js';
import { sessionRecords, type DatasetRecord } from './records.js';
import { datasetIdentity, MANIFEST_FILE, manifestOf, presentDataset, RECORDS_FILE, RECORDS_MEDIA_TYPE } from './present.js';
import type { DatasetRow, DatasetsStore, StoredDataset, Selection } from './store.js';
import { recordCells, type ModelShape } from './table/cells.js';
import { TABLE_FILES, tableFile, type TableFormat } from './table/files.js';
import { TableLayout, type TableRow } from './table/layout.js';
import type { WebhooksService } from '../webhooks/service.js';

export interface ExportTarget {
  storage_key: string;
  name?: string;
  /** The table's file format; JSON Lines unless given. */
  format?: TableFormat;
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

/** The model shapes of a selection, by `model_code:version`. */
type Shapes = Map<string, ModelShape>;
const pairKey = (code: string, version: string) => `${code}:${version}`;

/**
 * Exports the caller's closed sessions as dataset versions: JSON Lines of
 * records, the same records as a typed table (JSON Lines or Parquet), and a
 * manifest, written once into a storage configuration of the workspace. Only
 * the caller sees, lists and downloads their datasets.
 */
export class DatasetsService {
  constructor(
    private readonly db: Db,
    private readonly stores: {
      datasets: DatasetsStore;
      storageConfigs: Pick<StorageConfigsStore, 'byId'>;
      sessions: Pick<SessionsStore, 'ofUser' | 'closedOfUser'>;
      invocations: Pick<InvocationsStore, 'allInSession' | 'shadowsOfSession'>;
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
    const sessions = [{ id: session.id, model_code: model.model_code, version: model.version }];
    return this.write(principal, { name: target.name ?? `session-${session.id}`, storageKey: target.storage_key, format: target.format ?? 'jsonl' }, selection, sessions);
  }

  /** Every closed session of the caller matching the filter; records restricted by date and feedback. */
  async exportFiltered(principal: Principal, target: ExportTarget & { name: string }, filter: ExportFilter) {
    if (filter.model_version && !filter.model_code) throw new InputError('model_version: give model_code with it.');
    const after = filter.created_after ? Date.parse(filter.created_after) : undefined;
    const before = filter.created_before ? Date.parse(filter.created_before) : undefined;
    if (after !== undefined && before !== undefined && after >= before) throw new InputError('created_after: must be earlier than created_before.');
    const sessions = await this.stores.sessions.closedOfUser(this.db, principal.workspace!.id, principal.user.id, filter);
    const keep = (record: DatasetRecord) => {
      const at = Date.parse(record.created_at);
      return (after === undefined || at >= after) && (before === undefined || at < before) && (!filter.with_feedback || record.feedback.length > 0);
    };
    return this.write(principal, { name: target.name, storageKey: target.storage_key, format: target.format ?? 'jsonl' }, { kind: 'filter', ...filter }, sessions, keep);
  }

  async list(principal: Principal, page: Page, name?: string) {
    const { id: workspaceId, name: workspace } = principal.workspace!;
    const { rows, total, next } = await this.stores.datasets.pageOfUser(this.db, workspaceId, principal.user.id, page, name);
    return { items: rows.map((row) => presentDataset(row, workspace)), total, next };
  }

  async get(principal: Principal, id: string) {
    return presentDataset(await this.ofCaller(principal, id), principal.workspace!.name);
  }

  /** A stored file of one of the caller's datasets: its records, its table (404 for a version without one) or its manifest. */
  async open(principal: Principal, id: string, part: 'records' | 'table' | 'manifest') {
    const row = await this.ofCaller(principal, id);
    const file = fileOf(row, part);
    const config = (await this.stores.storageConfigs.byId(this.db, row.storage_config_id))!;
    const download = await this.storage.backendOf(config).get(file.objectKey);
    return { fileName: `${row.name}-v${row.version}.${file.suffix}`, contentType: file.contentType, stream: download.stream, size: download.size };
  }

  private async ofCaller(principal: Principal, id: string): Promise<StoredDataset> {
    const row = await this.stores.datasets.ofUser(this.db, principal.workspace!.id, principal.user.id, id);
    if (!row) throw new NotFoundError('Dataset not found.');
    return row;
  }

  /**
   * Writes the records, then the table, then the manifest, then the row; a
   * version whose row cannot be written leaves no file behind.
   */
  private async write(principal: Principal, target: { name: string; storageKey: string; format: TableFormat }, selection: Selection, sessions: SelectedSession[], keep: (record: DatasetRecord) => boolean = () => true) {
    const workspace = principal.workspace!;
    const { name, format } = target;
    const config = await this.storage.live(principal, target.storageKey);
    const backend = this.storage.backendOf(config);
    const shadowVersions = await this.shadowVersionsOf(workspace.id, sessions);
    const shapes = await this.shapesOf(principal, [...sessions, ...shadowVersions]);
    const version = await this.stores.datasets.nextVersion(this.db, workspace.id, principal.user.id, name);
    const id = crypto.randomUUID();
    const keys = { records: datasetObjectKey(workspace.id, id, RECORDS_FILE), table: datasetObjectKey(workspace.id, id, TABLE_FILES[format].file), manifest: datasetObjectKey(workspace.id, id, MANIFEST_FILE) };
    const createdAt = new Date();
    try {
      const layout = new TableLayout([...shapes.values()]);
      const written = await this.writeRecords(backend, keys.records, workspace.id, sessions, keep, (record) => layout.observe(cellsOf(record, shapes)));
      const identity = datasetIdentity({ id, name, version, created_at: createdAt }, workspace.name);
      const columns = layout.columns();
      const rows = tableRows(await backend.get(keys.records), layout, shapes);
      const content = tableFile(format, columns, rows, { dataset: identity, selection, columns });
      const table = await backend.put(keys.table, Readable.from(content), { contentType: TABLE_FILES[format].mediaType, maxBytes: this.settings.maxBytes });
      const row: DatasetRow & { table_format: TableFormat } = {
        id,
        workspace_id: workspace.id,
        created_by_id: principal.user.id,
        storage_config_id: config.id,
        name,
        version,
        selection,
        object_key: keys.records,
        manifest_object_key: keys.manifest,
        row_count: written.rowCount,
        size: written.size,
        sha256: written.sha256,
        table_format: format,
        table_object_key: keys.table,
        table_size: table.size,
        table_sha256: table.sha256,
        created_at: createdAt,
      };
      const manifest = manifestOf(row, workspace.name, columns);
      await backend.put(keys.manifest, Readable.from([manifest]), { contentType: 'application/json', maxBytes: manifest.length });
      const dataset = presentDataset({ ...row, storage_key: config.storage_key }, workspace.name);
      // The dataset and its webhook deliveries commit together, or neither does.
      await this.db.transaction(async (trx) => {
        await this.stores.datasets.insert(trx, row);
        await this.webhooks.queueDatasetExported(trx, workspace.id, dataset);
      });
      return dataset;
    } catch (error) {
      await Promise.all(Object.values(keys).map((key) => backend.remove(key))).catch(() => undefined);
      if ((error as { code?: string }).code === '23505') throw new ConflictError(`Another export of "${name}" took version ${version}; export again for the next one.`);
      throw error;
    }
  }

  /** The model versions the shadow invocations of these sessions ran on (their records need those versions' shapes). */
  private async shadowVersionsOf(workspaceId: number, sessions: SelectedSession[]): Promise<SelectedSession[]> {
    const versions = new Map<string, SelectedSession>();
    for (const session of sessions) {
      for (const row of await this.stores.invocations.shadowsOfSession(this.db, workspaceId, session.id)) versions.set(pairKey(row.model_code, row.version), { id: row.session_id, model_code: row.model_code, version: row.version });
    }
    return [...versions.values()];
  }

  /** The schemas of each model version of the selection, with its explainer chain. */
  private async shapesOf(principal: Principal, sessions: SelectedSession[]): Promise<Shapes> {
    const shapes: Shapes = new Map();
    for (const { model_code: code, version } of sessions) {
      if (shapes.has(pairKey(code, version))) continue;
      const [model, ...explainers] = await this.models.chainForReading(principal, code, version);
      shapes.set(pairKey(code, version), {
        model_code: code,
        version,
        input_schema: model!.input_schema,
        output_schema: model!.output_schema,
        feedback_schema: model!.feedback_schema,
        explainers: explainers.map((explainer) => ({ model_key: pairKey(explainer.model_code, explainer.version), output_schema: explainer.output_schema })),
      });
    }
    return shapes;
  }

  private async writeRecords(backend: StorageBackend, objectKey: string, workspaceId: number, sessions: SelectedSession[], keep: (record: DatasetRecord) => boolean, seen: (record: DatasetRecord) => void): Promise<Written> {
    let rowCount = 0;
    const { db, stores } = this;
    // A session's own records, then those of its shadow invocations, each on the version it ran on.
    async function recordsOfSession(session: SelectedSession): Promise<DatasetRecord[]> {
      const own = sessionRecords(session, await stores.invocations.allInSession(db, workspaceId, session.id));
      const shadows = await stores.invocations.shadowsOfSession(db, workspaceId, session.id);
      return [...own, ...shadows.flatMap((row) => sessionRecords(row, [row]))];
    }
    // One session's invocations at a time: the file streams to storage without holding the whole selection.
    async function* lines() {
      for (const session of sessions) {
        for (const record of await recordsOfSession(session)) {
          if (!keep(record)) continue;
          seen(record);
          rowCount += 1;
          yield Buffer.from(`${JSON.stringify(record)}\n`);
        }
      }
    }
    const stored = await backend.put(objectKey, Readable.from(lines()), { contentType: RECORDS_MEDIA_TYPE, maxBytes: this.settings.maxBytes });
    return { ...stored, rowCount };
  }
}

const cellsOf = (record: DatasetRecord, shapes: Shapes) => recordCells(record, shapes.get(pairKey(record.model_code, record.model_version)));

/** The table's rows, read back from the records file as stored: the table says what the records say. */
async function* tableRows(records: ObjectDownload, layout: TableLayout, shapes: Shapes): AsyncGenerator<TableRow> {
  for await (const line of readline.createInterface({ input: records.stream, crlfDelay: Infinity })) {
    if (line !== '') yield layout.row(cellsOf(JSON.parse(line) as DatasetRecord, shapes));
  }
}

/** Where a part of a version is stored, and how it is served. */
function fileOf(row: DatasetRow, part: 'records' | 'table' | 'manifest') {
  if (part === 'records') return { objectKey: row.object_key, suffix: 'jsonl', contentType: RECORDS_MEDIA_TYPE };
  if (part === 'manifest') return { objectKey: row.manifest_object_key, suffix: 'manifest.json', contentType: 'application/json' };
  if (!row.table_format || !row.table_object_key) throw new NotFoundError('This dataset version has no table: it was exported before tables existed; export it again.');
  const table = TABLE_FILES[row.table_format];
  return { objectKey: row.table_object_key, suffix: `table.${table.extension}`, contentType: table.mediaType };
}
