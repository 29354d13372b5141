import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { FILESYSTEM_STORAGE, S3_STORAGE, StorageClasses } from './classes.js';
import { S3Storage } from './s3-storage.js';

const VALID = {
  access_key: 'didyma',
  secret_key: 's3cr3t-value',
  endpoint: 'http://127.0.0.1:59000',
  bucket_name: 'model-cards',
};

function validate(init: unknown) {
  return new StorageClasses().validateInit(S3_STORAGE, init);
}

describe('storage classes', () => {
  it('lists the built-in classes, the filesystem one only where the platform enables it', () => {
    expect(new StorageClasses().names()).to.deep.equal([S3_STORAGE]);
    expect(new StorageClasses({ filesystemRoot: '/tmp/files' }).names()).to.deep.equal([S3_STORAGE, FILESYSTEM_STORAGE]);
  });

  it('refuses an unknown class with the list of known ones, never loading anything', () => {
    const classes = new StorageClasses({ filesystemRoot: '/tmp/files' });
    for (const name of ['storages.backends.s3boto3.S3Boto3Storage', 'node:child_process', '__proto__', 'constructor', 42]) {
      let error: unknown;
      try {
        classes.get(name);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(InputError);
      expect((error as InputError).message).to.equal(
        `Unknown storage_class ${JSON.stringify(name)}. Known classes: didyma.storage.S3Storage, didyma.storage.FilesystemStorage.`,
      );
      expect((error as InputError).details?.map((detail) => detail.field)).to.deep.equal(['storage_class']);
    }
  });

  describe(S3_STORAGE, () => {
    it('marks both keys as secrets and can show the init without them', () => {
      const classes = new StorageClasses();
      expect(classes.secretKeys(S3_STORAGE)).to.deep.equal(['secret_key', 'access_key']);
      expect(classes.withoutSecrets(S3_STORAGE, validate(VALID))).to.deep.equal({
        endpoint: 'http://127.0.0.1:59000',
        bucket_name: 'model-cards',
        use_ssl: false,
      });
    });

    it('normalizes the endpoint to an origin with use_ssl matching its scheme', () => {
      expect(validate(VALID)).to.deep.equal({ ...VALID, use_ssl: false });
      expect(validate({ ...VALID, endpoint: 'minio.storage.svc:9000' })).to.include({ endpoint: 'https://minio.storage.svc:9000', use_ssl: true });
      expect(validate({ ...VALID, endpoint: 'minio.storage.svc:9000', use_ssl: false })).to.include({ endpoint: 'http://minio.storage.svc:9000', use_ssl: false });
      expect(validate({ ...VALID, endpoint: 'https://s3.eu-west-1.amazonaws.com/', region: 'eu-west-1' })).to.include({
        endpoint: 'https://s3.eu-west-1.amazonaws.com',
        use_ssl: true,
        region: 'eu-west-1',
      });
      expect(validate({ ...VALID, endpoint: 'http://[::1]:9000', region: null })).to.deep.equal({ ...VALID, endpoint: 'http://[::1]:9000', use_ssl: false });
    });

    it('gives back an init that validates to itself, so stored configurations stay valid', () => {
      const once = validate({ ...VALID, endpoint: 'minio:9000', use_ssl: false, region: 'us-east-1' });
      expect(validate(once)).to.deep.equal(once);
    });

    for (const key of ['access_key', 'secret_key', 'endpoint', 'bucket_name']) {
      it(`requires ${key}`, () => {
        const init: Record<string, unknown> = { ...VALID };
        delete init[key];
        expect(() => validate(init)).to.throw(InputError, `connector_init.${key} is required.`);
      });
    }

    for (const [init, message] of [
      [null, 'connector_init must be an object.'],
      [['a'], 'connector_init must be an object.'],
      [{ ...VALID, access_key: 12 }, 'connector_init.access_key must be a string.'],
      [{ ...VALID, secret_key: '' }, 'connector_init.secret_key must not be empty.'],
      [{ ...VALID, use_ssl: 'yes' }, 'connector_init.use_ssl must be true or false.'],
      [{ ...VALID, region: 'eu west' }, 'connector_init.region must be letters, digits, hyphens and underscores only.'],
      [{ ...VALID, bucket_name: 'Model_Cards' }, 'connector_init.bucket_name must be a valid bucket name'],
      [{ ...VALID, bucket_name: '192.168.1.1' }, 'connector_init.bucket_name must be a valid bucket name'],
      [{ ...VALID, endpoint: 'ftp://files.example.com' }, 'connector_init.endpoint must use http or https.'],
      [{ ...VALID, endpoint: 'http://user:pw@minio:9000' }, 'connector_init.endpoint must not contain credentials; use access_key and secret_key.'],
      [{ ...VALID, endpoint: 'http://minio:9000/bucket' }, 'connector_init.endpoint must be a scheme, host and port only, without a path.'],
      [{ ...VALID, endpoint: 'http://' }, 'connector_init.endpoint must be a URL such as http://host:9000, or host:port.'],
      [{ ...VALID, use_ssl: true }, 'connector_init.use_ssl contradicts the http scheme of connector_init.endpoint.'],
      [{ ...VALID, bucket: 'x' }, 'connector_init.bucket is not accepted by didyma.storage.S3Storage (accepted: access_key, secret_key, endpoint, bucket_name, region, use_ssl).'],
    ] as const) {
      it(`refuses ${JSON.stringify(init)?.slice(0, 90)}`, () => {
        expect(() => validate(init)).to.throw(InputError, message);
      });
    }

    it('names the field in the error details and never echoes a secret', () => {
      try {
        validate({ ...VALID, secret_key: 'do-not-leak', access_key: 7 });
        expect.fail('expected an InputError');
      } catch (error) {
        expect(error).to.be.instanceOf(InputError);
        expect((error as InputError).details?.map((detail) => detail.field)).to.deep.equal(['connector_init.access_key']);
        expect(JSON.stringify({ message: (error as InputError).message, details: (error as InputError).details })).to.not.include('do-not-leak');
      }
    });

    it('creates a backend without contacting the server', () => {
      expect(new StorageClasses().backend(S3_STORAGE, VALID)).to.be.instanceOf(S3Storage);
    });

    it('validates the init again when creating a backend from a stored configuration', () => {
      expect(() => new StorageClasses().backend(S3_STORAGE, { ...VALID, endpoint: 'gopher://x' })).to.throw(InputError, 'connector_init.endpoint');
    });
  });
});
