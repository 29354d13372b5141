import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { Deadlines, Outbound } from '../net/outbound.js';

// What the platform needs from a blob store: stream a file in, stream it out,
// delete it, and tell a supervisor early when a configuration cannot work.

export interface PutInfo {
  /** Media type stored with the object and served back on download. */
  contentType: string;
  /** More bytes than this aborts the upload with a 413 and leaves no object behind. */
  maxBytes: number;
}

export interface StoredObject {
  size: number;
  /** Hex SHA-256 of the bytes as stored, computed while streaming. */
  sha256: string;
}

export interface ObjectDownload {
  stream: Readable;
  size: number;
  contentType?: string;
}

export interface StorageBackend {
  /**
   * Streams `stream` into the object `objectKey` without holding the whole file
   * in memory. When the stream errors or exceeds `info.maxBytes`, the upload is
   * abandoned, nothing remains under the key, and the error is rethrown
   * (PayloadTooLargeError for the size limit).
   */
  put(objectKey: string, stream: Readable, info: PutInfo): Promise<StoredObject>;
  /** NotFoundError when there is no such object. */
  get(objectKey: string): Promise<ObjectDownload>;
  /** Idempotent: removing a missing object is not an error. */
  remove(objectKey: string): Promise<void>;
  /**
   * Verifies the configuration works (bucket reachable with these credentials,
   * folder writable). InputError with a message naming what failed, never a secret.
   */
  check(): Promise<void>;
}

/** Options the platform (not a request) gives every storage class. */
export interface StorageOptions {
  /**
   * Absolute folder under which FilesystemStorage may keep files. Absent: the
   * class is refused, which is the production default (files on one pod's disk
   * are lost and invisible to the other replicas).
   */
  filesystemRoot?: string;
  /**
   * Resolves the host of every connection a storage client opens and refuses
   * addresses the outbound URL policy forbids (its `lookupFor`, given the
   * port): the check is made at connect time, after DNS, whatever the name
   * resolved to at registration.
   */
  lookupFor?: (port: number) => LookupFunction;
  /**
   * Bounds of each request a storage client makes: connect, headers, and the
   * whole request, body included. A storage registration's probe gets the
   * headers deadline for its whole requests.
   */
  deadlines?: Deadlines;
}

/** What a class is given to create a backend: the options, and the process's storage connections. */
export interface StorageContext extends StorageOptions {
  /** Every request of a storage client goes through it (pool, lookup, deadlines); closed at shutdown. */
  outbound: Outbound;
}

/** A validated `connector_init`: flat strings and booleans only. */
export type ConnectorInit = Readonly<Record<string, string | boolean | undefined>>;

export interface StorageClass<Init extends ConnectorInit = ConnectorInit> {
  /** Fully qualified name used as `storage_class`. */
  readonly name: string;
  /** Keys of `connector_init` that are secrets: encrypted at rest, never shown. */
  readonly secretKeys: readonly string[];
  /** Normalized init, or InputError naming the offending `connector_init.<key>`. */
  validateInit(init: unknown): Init;
  create(init: Init, context: StorageContext): StorageBackend;
}
