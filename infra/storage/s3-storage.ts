import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Client, ItemBucketMetadata } from 'minio';
import { AppError, BadGatewayError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { ObjectDownload, PutInfo, StorageBackend, StoredObject } from './backend.js';
import { ContentMeter, deferErrors } from './content-meter.js';
import { assertObjectKey } from './object-key.js';
import { inParts, partSizeFor } from './parts.js';
import { assertPutInfo } from './put-info.js';
import { codeOf, describeFailure } from './s3-failures.js';

// Uploads are driven here rather than by the client's putObject: for a
// stream of unknown length that one buffers parts of up to ~550 MiB, ignores
// errors of the source stream (the upload then never settles) and leaves the
// multipart upload behind on failure. Here memory stays at one part, an
// oversized or broken stream aborts the multipart upload, and small files go
// up in a single PUT. (A bucket lifecycle rule that aborts incomplete
// multipart uploads remains the safety net for a process that dies mid-way.)

const MISSING_OBJECT_CODES = new Set(['NoSuchKey', 'NotFound']);

export interface S3Location {
  bucket: string;
  /** Normalized origin, for messages. */
  endpoint: string;
  /** Only to cut it out of error messages. */
  secret: string;
}

export interface S3Clients {
  /** For files: the storage deadlines, a whole transfer included. */
  transfer: Promise<Client>;
  /** For the registration's check: each request whole within the headers deadline (made only when a check runs). */
  probe: () => Promise<Client>;
}

interface UploadedPart {
  part: number;
  etag: string;
}

export class S3Storage implements StorageBackend {
  /** Resolves once the client library is loaded (s3-class.ts). */
  private readonly client: Promise<Client>;
  private readonly probe: () => Promise<Client>;

  constructor(
    clients: S3Clients,
    private readonly location: S3Location,
  ) {
    this.client = clients.transfer;
    this.probe = clients.probe;
  }

  async put(objectKey: string, stream: Readable, info: PutInfo): Promise<StoredObject> {
    deferErrors(stream);
    assertObjectKey(objectKey);
    assertPutInfo(info);
    const meter = new ContentMeter(info.maxBytes);
    const partSize = partSizeFor(info.maxBytes);
    const parts = inParts(meter.measure(stream), partSize);
    try {
      const first = await parts.next();
      // Only the last part can be shorter than partSize: the whole file is in hand.
      if (first.done || first.value.length < partSize) {
        await this.putWhole(objectKey, first.done ? Buffer.alloc(0) : first.value, info.contentType);
      } else {
        await this.putInParts(objectKey, first.value, parts, info.contentType);
      }
    } finally {
      // When the backend failed half-way, stop reading (and destroy) the source.
      await parts.return(undefined);
    }
    return meter.result();
  }

  async get(objectKey: string): Promise<ObjectDownload> {
    assertObjectKey(objectKey);
    const { bucket } = this.location;
    const stat = await this.backend(async () => (await this.client).statObject(bucket, objectKey));
    const stream = await this.backend(async () => (await this.client).getObject(bucket, objectKey));
    return { stream, size: stat.size, contentType: contentTypeOf(stat.metaData) };
  }

  async remove(objectKey: string): Promise<void> {
    assertObjectKey(objectKey);
    await this.backend(async () => (await this.client).removeObject(this.location.bucket, objectKey));
  }

  async check(): Promise<void> {
    const { bucket, endpoint, secret } = this.location;
    const unreachable = (reason: string) => new InputError(`bucket ${bucket} not reachable at endpoint ${endpoint}: ${reason}.`, [{ field: 'connector_init', message: `bucket not reachable: ${reason}` }]);
    let exists: boolean;
    try {
      exists = await (await this.probe()).bucketExists(bucket);
    } catch (error) {
      throw unreachable(describeFailure(error, secret));
    }
    if (!exists) throw unreachable('the bucket does not exist');
  }

  private async putWhole(objectKey: string, data: Buffer, contentType: string): Promise<void> {
    await this.backend(async () => (await this.client).putObject(this.location.bucket, objectKey, data, data.length, { 'Content-Type': contentType }));
  }

  private async putInParts(objectKey: string, first: Buffer, rest: AsyncGenerator<Buffer, void, undefined>, contentType: string): Promise<void> {
    const { bucket } = this.location;
    const uploadId = await this.backend(async () => (await this.client).initiateNewMultipartUpload(bucket, objectKey, { 'Content-Type': contentType }));
    let completing = false;
    try {
      const uploaded = [await this.putPart(objectKey, uploadId, 1, first)];
      for (let next = await rest.next(); !next.done; next = await rest.next()) {
        uploaded.push(await this.putPart(objectKey, uploadId, uploaded.length + 1, next.value));
      }
      completing = true;
      await this.backend(async () => (await this.client).completeMultipartUpload(bucket, objectKey, uploadId, uploaded));
    } catch (error) {
      await this.abandon(objectKey, uploadId, completing);
      throw error;
    }
  }

  private async putPart(objectKey: string, uploadId: string, partNumber: number, data: Buffer): Promise<UploadedPart> {
    // Content-MD5 lets the server reject a part damaged in transit (over TLS the
    // client signs no payload hash of its own).
    const headers = { 'Content-MD5': createHash('md5').update(data).digest('base64') };
    const part = await this.backend(async () =>
      (await this.client).uploadPart({ bucketName: this.location.bucket, objectName: objectKey, uploadID: uploadId, partNumber, headers }, data),
    );
    return { part: partNumber, etag: part.etag };
  }

  /** Best effort: the original error is what the caller needs to see. */
  private async abandon(objectKey: string, uploadId: string, completing: boolean): Promise<void> {
    const { bucket } = this.location;
    await (await this.client).abortMultipartUpload(bucket, objectKey, uploadId).catch(() => undefined);
    // A completion that failed on the way back may still have created the object.
    if (completing) await (await this.client).removeObject(bucket, objectKey).catch(() => undefined);
  }

  /** Runs a client call; a missing object becomes 404, any other failure a 502 without the secret. */
  private async backend<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof AppError) throw error;
      const code = codeOf(error);
      if (code !== undefined && MISSING_OBJECT_CODES.has(code)) throw new NotFoundError('File not found.');
      throw new BadGatewayError(`The storage backend failed: ${describeFailure(error, this.location.secret)}.`);
    }
  }
}

function contentTypeOf(metaData: ItemBucketMetadata): string | undefined {
  const value: unknown = metaData['content-type'];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
