import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Db } from '../../infra/db/database.js';
import { ConflictError, GoneError, InputError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import { fileObjectKey } from '../../infra/storage/object-key.js';
import { safeFileName } from '../../infra/storage/file-names.js';
import type { FileRow, FilesStore, StorageConfigsStore, UploadsStore } from './store.js';
import type { StorageConfigsService } from './storage.service.js';

export interface UploadSettings {
  maxBytes: number;
  mediaTypes: string[];
  ttlSeconds: number;
}

export interface FileStream {
  fileName: string;
  contentType: string;
  stream: Readable;
}

/** `type/subtype` against a list that may hold `type/*`. */
export function mediaTypeAllowed(type: string, allowed: string[]): boolean {
  const base = type.split(';')[0]!.trim().toLowerCase();
  return allowed.some((a) => a === base || (a.endsWith('/*') && base.startsWith(a.slice(0, -1))));
}

/**
 * The two-step upload (request_upload → proxy_upload) and downloads. Upload
 * ids are single-use and expire; the file streams to the backend, which
 * records its size and SHA-256.
 */
export class UploadsService {
  constructor(
    private readonly db: Db,
    private readonly stores: { files: FilesStore; storageConfigs: StorageConfigsStore; uploads: UploadsStore },
    private readonly storage: StorageConfigsService,
    private readonly settings: UploadSettings,
  ) {}

  async requestUpload(principal: Principal, storageKey: string, input: { file_name: string; content_type?: string; size?: number }) {
    const config = await this.storage.live(principal, storageKey);
    if (input.content_type && !mediaTypeAllowed(input.content_type, this.settings.mediaTypes)) {
      throw new UnsupportedMediaTypeError(`content_type ${input.content_type} is not accepted; accepted: ${this.settings.mediaTypes.join(', ')}.`);
    }
    if (input.size !== undefined && input.size > this.settings.maxBytes) throw new PayloadTooLargeError(`size: at most ${this.settings.maxBytes} bytes.`);
    const row = await this.stores.uploads.insert(this.db, {
      id: crypto.randomUUID(),
      workspace_id: principal.workspace!.id,
      storage_config_id: config.id,
      file_name: safeFileName(input.file_name),
      content_type: input.content_type?.toLowerCase() ?? null,
      declared_size: input.size ?? null,
      created_by_id: principal.user.id,
      expires_at: new Date(Date.now() + this.settings.ttlSeconds * 1000),
    });
    return { upload_id: row.id, expires_at: row.expires_at.toISOString() };
  }

  /**
   * Streams one file for an upload id. `receive` hands the multipart file to
   * the sink; the id is taken first (single use) and given back if the
   * transfer fails, so nothing is half-written and the client may retry.
   */
  async proxyUpload(
    principal: Principal,
    storageKey: string,
    uploadId: string,
    receive: (maxBytes: number, sink: (stream: Readable, file: { fileName: string; contentType: string }) => Promise<{ size: number; sha256: string; contentType: string }>) => Promise<{ result: { size: number; sha256: string; contentType: string } }>,
  ) {
    const workspaceId = principal.workspace!.id;
    const config = await this.storage.live(principal, storageKey);
    const upload = await this.takeUpload(workspaceId, uploadId, config.id);
    const fileId = crypto.randomUUID();
    const objectKey = fileObjectKey(workspaceId, fileId);
    const backend = this.storage.backendOf(config);
    const maxBytes = Math.min(upload.declared_size ?? this.settings.maxBytes, this.settings.maxBytes);
    try {
      const { result } = await receive(maxBytes, async (stream, file) => {
        const contentType = upload.content_type ?? file.contentType;
        if (!mediaTypeAllowed(contentType, this.settings.mediaTypes)) {
          stream.resume();
          throw new UnsupportedMediaTypeError(`${contentType} is not accepted; accepted: ${this.settings.mediaTypes.join(', ')}.`);
        }
        const stored = await backend.put(objectKey, stream, { contentType, maxBytes });
        return { ...stored, contentType };
      });
      const row = await this.db.transaction(async (trx) => {
        const file = await this.stores.files.insert(trx, {
          id: fileId,
          workspace_id: workspaceId,
          storage_config_id: config.id,
          object_key: objectKey,
          file_name: upload.file_name,
          content_type: result.contentType,
          size: result.size,
          sha256: result.sha256,
          created_by_id: principal.user.id,
        });
        await this.stores.uploads.finish(trx, upload.id, file.id);
        return file;
      });
      return presentFile(row);
    } catch (error) {
      await this.stores.uploads.giveBack(this.db, upload.id);
      await backend.remove(objectKey).catch(() => undefined);
      throw error;
    }
  }

  /** Stores a file a model produced into a live storage of the workspace (the invocation's outputStorageId). */
  async storeGenerated(workspaceId: number, storageKey: string, file: { fileName: string; contentType: string; data: Buffer }, createdById: number) {
    const config = await this.stores.storageConfigs.liveByKey(this.db, workspaceId, storageKey);
    if (!config) throw new NotFoundError(`Storage configuration "${storageKey}" no longer exists.`);
    const fileId = crypto.randomUUID();
    const objectKey = fileObjectKey(workspaceId, fileId);
    const backend = this.storage.backendOf(config);
    const stored = await backend.put(objectKey, Readable.from([file.data]), { contentType: file.contentType, maxBytes: this.settings.maxBytes });
    try {
      const row = await this.stores.files.insert(this.db, {
        id: fileId,
        workspace_id: workspaceId,
        storage_config_id: config.id,
        object_key: objectKey,
        file_name: safeFileName(file.fileName),
        content_type: file.contentType,
        size: stored.size,
        sha256: stored.sha256,
        created_by_id: createdById,
      });
      return { ...presentFile(row), storage_key: storageKey };
    } catch (error) {
      await backend.remove(objectKey).catch(() => undefined);
      throw error;
    }
  }

  /** A file of the caller's workspace stored under `storageKey` (de-registered configurations included). */
  async open(principal: Principal, storageKey: string, fileId: string): Promise<FileStream & { size: number }> {
    const file = await this.stores.files.inWorkspace(this.db, principal.workspace!.id, fileId);
    const config = file ? await this.stores.storageConfigs.byId(this.db, file.storage_config_id) : undefined;
    if (!file || !config || config.storage_key !== storageKey) throw new NotFoundError('File not found.');
    return this.openFile(file);
  }

  async openFile(file: FileRow): Promise<FileStream & { size: number }> {
    const config = (await this.stores.storageConfigs.byId(this.db, file.storage_config_id))!;
    const download = await this.storage.backendOf(config).get(file.object_key);
    return { fileName: file.file_name, contentType: file.content_type, stream: download.stream, size: download.size };
  }

  private async takeUpload(workspaceId: number, uploadId: string, storageConfigId: number) {
    const taken = await this.stores.uploads.take(this.db, workspaceId, uploadId);
    if (taken && taken.storage_config_id === storageConfigId) return taken;
    if (taken) await this.stores.uploads.giveBack(this.db, uploadId);
    const existing = await this.stores.uploads.inWorkspace(this.db, workspaceId, uploadId);
    if (!existing || existing.storage_config_id !== storageConfigId) throw new NotFoundError('Upload id not found.');
    if (existing.file_id || existing.used_at) throw new ConflictError('This upload id has already been used.', 'upload_used');
    throw new GoneError('This upload id has expired; request a new one.', 'upload_expired');
  }
}

export const presentFile = (f: FileRow) => ({ file_id: f.id, file_name: f.file_name, content_type: f.content_type, size: Number(f.size), sha256: f.sha256 });

export function assertFileId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !/^[0-9a-f-]{36}$/i.test(value)) throw new InputError(`${field}: expected a file id (UUID).`);
  return value;
}
