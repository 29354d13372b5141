import type { Transport } from '../net/outbound.js';
import type { StorageClass, StorageContext } from './backend.js';
import { fieldError, initObject, optionalBoolean, optionalString, requiredString } from './init-fields.js';
import { parseEndpoint } from './s3-endpoint.js';
import { S3Storage } from './s3-storage.js';

export const S3_STORAGE = 'didyma.storage.S3Storage';

// A type alias, not an interface: it must fit ConnectorInit's index signature.
export type S3Init = {
  readonly access_key: string;
  readonly secret_key: string;
  /** Normalized origin, e.g. `http://127.0.0.1:59000`. */
  readonly endpoint: string;
  readonly bucket_name: string;
  readonly region?: string;
  readonly use_ssl: boolean;
};

const ACCEPTED_KEYS = ['access_key', 'secret_key', 'endpoint', 'bucket_name', 'region', 'use_ssl'];
// S3 bucket naming rules: 3–63 lowercase letters, digits, dots and hyphens,
// starting and ending with a letter or digit, not shaped like an IP address.
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const IP_ADDRESS = /^\d+\.\d+\.\d+\.\d+$/;
const REGION = /^[A-Za-z0-9_-]{1,64}$/;

/** Any S3-compatible object store (MinIO, AWS S3, Ceph RGW, …) through the minio client. */
export const s3StorageClass: StorageClass<S3Init> = {
  name: S3_STORAGE,
  // Both keys are credentials: sealed at rest, masked in every answer, kept in the Secret in Kubernetes mode.
  secretKeys: ['secret_key', 'access_key'],

  validateInit(init: unknown): S3Init {
    const fields = initObject(init, ACCEPTED_KEYS, S3_STORAGE);
    const accessKey = requiredString(fields, 'access_key');
    const secretKey = requiredString(fields, 'secret_key');
    const endpoint = parseEndpoint(requiredString(fields, 'endpoint'), optionalBoolean(fields, 'use_ssl'));
    const bucketName = bucketNameOf(requiredString(fields, 'bucket_name'));
    const region = regionOf(optionalString(fields, 'region'));
    return {
      access_key: accessKey,
      secret_key: secretKey,
      endpoint: endpoint.origin,
      bucket_name: bucketName,
      ...(region === undefined ? {} : { region }),
      use_ssl: endpoint.useSSL,
    };
  },

  create(init: S3Init, { outbound }: StorageContext): S3Storage {
    const endpoint = parseEndpoint(init.endpoint, init.use_ssl);
    // The client library loads with the first S3 storage (about 40 MiB a process otherwise pays for nothing).
    const clientWith = (transport: Transport) =>
      import('minio').then(
        ({ Client }) =>
          new Client({
            endPoint: endpoint.host,
            port: endpoint.port,
            useSSL: endpoint.useSSL,
            accessKey: init.access_key,
            secretKey: init.secret_key,
            region: init.region,
            // Every request goes through the process's storage connections: the URL policy's lookup, the deadlines, the shutdown.
            transport,
          }),
      );
    const { headersMs } = outbound.deadlines;
    return new S3Storage(
      { transfer: clientWith(outbound.transport()), probe: () => clientWith(outbound.transport({ totalMs: headersMs })) },
      { bucket: init.bucket_name, endpoint: endpoint.origin, secret: init.secret_key },
    );
  },
};

function bucketNameOf(value: string): string {
  if (!BUCKET_NAME.test(value) || value.includes('..') || IP_ADDRESS.test(value)) {
    throw fieldError('connector_init.bucket_name', 'connector_init.bucket_name must be a valid bucket name: 3 to 63 lowercase letters, digits, dots and hyphens');
  }
  return value;
}

function regionOf(value: string | undefined): string | undefined {
  if (value !== undefined && !REGION.test(value)) {
    throw fieldError('connector_init.region', 'connector_init.region must be letters, digits, hyphens and underscores only');
  }
  return value;
}
