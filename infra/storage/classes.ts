import { InputError } from '../../kernel/errors/errors.js';
import { Outbound, type Deadlines } from '../net/outbound.js';
import type { ConnectorInit, StorageBackend, StorageClass, StorageContext, StorageOptions } from './backend.js';
import { FILESYSTEM_STORAGE, filesystemStorageClass, notEnabledError } from './filesystem-class.js';
import { s3StorageClass } from './s3-class.js';

// `storage_class` comes from a request, so it is only ever a key into this
// fixed table: no module named by a request is ever loaded.

export { FILESYSTEM_STORAGE } from './filesystem-class.js';
export { S3_STORAGE } from './s3-class.js';

const BUILT_IN: readonly StorageClass[] = [s3StorageClass, filesystemStorageClass];

/** The configuration's defaults: DIDYMA_UPSTREAM_CONNECT_TIMEOUT_MS, DIDYMA_STORAGE_HEADERS_TIMEOUT_MS, DIDYMA_STORAGE_TIMEOUT_MS. */
export const DEFAULT_STORAGE_DEADLINES: Deadlines = { connectMs: 5_000, headersMs: 10_000, totalMs: 300_000 };

export class StorageClasses {
  private readonly available: ReadonlyMap<string, StorageClass>;
  private readonly context: StorageContext;

  constructor(options: StorageOptions = {}) {
    const enabled = BUILT_IN.filter((storageClass) => storageClass.name !== FILESYSTEM_STORAGE || Boolean(options.filesystemRoot));
    this.available = new Map(enabled.map((storageClass) => [storageClass.name, storageClass]));
    // One pool for every storage configuration, rather than one per backend, so that shutdown can cut them all.
    this.context = { ...options, outbound: new Outbound({ deadlines: options.deadlines ?? DEFAULT_STORAGE_DEADLINES, lookupFor: options.lookupFor }) };
  }

  /** Names a configuration may use on this platform. */
  names(): string[] {
    return [...this.available.keys()];
  }

  /** InputError listing the known classes when `name` is not one of them. */
  get(name: unknown): StorageClass {
    const found = typeof name === 'string' ? this.available.get(name) : undefined;
    if (found) return found;
    const known = `Known classes: ${this.names().join(', ')}.`;
    if (name === FILESYSTEM_STORAGE) throw new InputError(`${notEnabledError().message} ${known}`, [{ field: 'storage_class', message: `not enabled; known classes: ${this.names().join(', ')}` }]);
    throw new InputError(`Unknown storage_class ${JSON.stringify(name)}. ${known}`, [{ field: 'storage_class', message: `unknown; known classes: ${this.names().join(', ')}` }]);
  }

  /** The normalized `connector_init` to store, or InputError naming the bad key. */
  validateInit(name: unknown, init: unknown): ConnectorInit {
    return this.get(name).validateInit(init);
  }

  /** A backend for a stored (or just submitted) configuration; validates the init again. */
  backend(name: unknown, init: unknown): StorageBackend {
    const storageClass = this.get(name);
    return storageClass.create(storageClass.validateInit(init), this.context);
  }

  /** Cuts the storage requests still open and their connections; call when the process stops. */
  close(): void {
    this.context.outbound.close();
  }

  secretKeys(name: unknown): readonly string[] {
    return this.get(name).secretKeys;
  }

  /** The init as it may be shown or put in a CR spec: secret keys left out. */
  withoutSecrets(name: unknown, init: ConnectorInit): ConnectorInit {
    const secrets = this.secretKeys(name);
    return Object.fromEntries(Object.entries(init).filter(([key]) => !secrets.includes(key)));
  }
}
