import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { InputError, NotFoundError, PayloadTooLargeError } from '../../kernel/errors/errors.js';
import { collect } from '../http/multipart.js';
import type { StorageBackend } from './backend.js';
import { FILESYSTEM_STORAGE, StorageClasses } from './classes.js';

const KEY = 'workspace/1/files/0b7c3c1e-8d0a-4f5e-9c61-2f0f5f4b0a11';

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A stream of `count` chunks of 64 KiB, produced on demand. */
function chunked(count: number, fill = 7): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < count; i += 1) yield Buffer.alloc(64 * 1024, fill + i);
    })(),
  );
}

/** Every file under `folder`, as paths relative to it. */
async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)));
}

describe('FilesystemStorage', () => {
  let root: string;
  let storage: StorageBackend;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'didyma-storage-'));
    storage = new StorageClasses({ filesystemRoot: root }).backend(FILESYSTEM_STORAGE, { path: 'team-a' });
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('stores a streamed file and gives back its bytes, size, SHA-256 and content type', async () => {
    const expected = await collect(chunked(20));
    const stored = await storage.put(KEY, chunked(20), { contentType: 'text/csv; charset=utf-8', maxBytes: 10 * 1024 * 1024 });
    expect(stored).to.deep.equal({ size: 20 * 64 * 1024, sha256: sha256(expected) });

    const download = await storage.get(KEY);
    expect(download.size).to.equal(stored.size);
    expect(download.contentType).to.equal('text/csv; charset=utf-8');
    expect(sha256(await collect(download.stream))).to.equal(stored.sha256);
    expect(await readFile(path.join(root, 'team-a', ...KEY.split('/')))).to.deep.equal(expected);
  });

  it('stores an empty file', async () => {
    const stored = await storage.put(KEY, Readable.from([]), { contentType: 'application/octet-stream', maxBytes: 0 });
    expect(stored).to.deep.equal({ size: 0, sha256: sha256(Buffer.alloc(0)) });
    expect((await collect((await storage.get(KEY)).stream)).length).to.equal(0);
  });

  it('removes a file; removing it again is fine, reading it is a 404', async () => {
    await storage.put(KEY, Readable.from([Buffer.from('hello')]), { contentType: 'text/plain', maxBytes: 100 });
    await storage.remove(KEY);
    await storage.remove(KEY);
    await expectRejection(storage.get(KEY), NotFoundError);
    expect(await filesUnder(root)).to.deep.equal([]);
  });

  it('answers 404 for a file that was never stored', async () => {
    await expectRejection(storage.get('workspace/1/files/missing'), NotFoundError);
  });

  it('stops reading at the size limit and leaves no file, partial or final', async () => {
    let produced = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          produced += 1;
          yield Buffer.alloc(64 * 1024);
        }
      })(),
    );
    const error = await expectRejection(storage.put(KEY, endless, { contentType: 'text/plain', maxBytes: 1024 * 1024 }), PayloadTooLargeError);
    expect(error.message).to.equal('The file is larger than 1048576 bytes.');
    expect(produced).to.be.below(40);
    expect(endless.destroyed).to.equal(true);
    expect(await filesUnder(root)).to.deep.equal([]);
  });

  it('leaves no file when the source stream fails half-way, and keeps an earlier file under the key', async () => {
    await storage.put(KEY, Readable.from([Buffer.from('first version')]), { contentType: 'text/plain', maxBytes: 100 });
    const broken = new Readable({ read() {} });
    broken.push(Buffer.from('partial'));
    setImmediate(() => broken.destroy(new Error('client went away')));

    const error = await expectRejection(storage.put(KEY, broken, { contentType: 'text/plain', maxBytes: 100 }), Error);
    expect(error.message).to.equal('client went away');
    expect((await collect((await storage.get(KEY)).stream)).toString()).to.equal('first version');
    expect((await filesUnder(root)).filter((file) => file.endsWith('.partial'))).to.deep.equal([]);
  });

  it('leaves no partial file when the source has failed before the copy starts', async () => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const failed = new Readable({ read() {} });
      failed.destroy(new Error('client went away'));
      await expectRejection(storage.put(KEY, failed, { contentType: 'text/plain', maxBytes: 100 }), Error);
    }
    expect(await filesUnder(root)).to.deep.equal([]);
  });

  it('refuses object keys that could leave its folder, touching nothing', async () => {
    for (const key of ['../escape', 'a/../../escape', '/etc/passwd', 'a\\..\\escape', '.meta/x']) {
      await expectRejection(storage.put(key, Readable.from([Buffer.from('x')]), { contentType: 'text/plain', maxBytes: 10 }), InputError);
      await expectRejection(storage.get(key), InputError);
      await expectRejection(storage.remove(key), InputError);
    }
    expect(await filesUnder(root)).to.deep.equal([]);
  });

  it('refuses a malformed content type, which would end up in a header', async () => {
    await expectRejection(storage.put(KEY, Readable.from([Buffer.from('x')]), { contentType: 'text/plain\r\nX-Evil: 1', maxBytes: 10 }), InputError);
  });

  it('keeps configurations apart: one path cannot read another path’s files', async () => {
    await storage.put(KEY, Readable.from([Buffer.from('a')]), { contentType: 'text/plain', maxBytes: 10 });
    const other = new StorageClasses({ filesystemRoot: root }).backend(FILESYSTEM_STORAGE, { path: 'team-b' });
    await expectRejection(other.get(KEY), NotFoundError);
  });

  describe('check', () => {
    it('passes for a folder it can create and write, leaving nothing behind', async () => {
      await storage.check();
      expect(await readdir(path.join(root, 'team-a'))).to.deep.equal([]);
    });

    it('fails with a clear message when a file is in the way of the folder', async () => {
      await writeFile(path.join(root, 'team-a'), 'not a folder');
      const error = await expectRejection(storage.check(), InputError);
      expect(error.message).to.equal('folder "team-a" is not writable under the storage root: a file is in the way of the folder.');
      expect(error.message).to.not.include(root);
    });

    it('fails when the folder is a symbolic link out of the root', async () => {
      const outside = await mkdtemp(path.join(tmpdir(), 'didyma-outside-'));
      try {
        await symlink(outside, path.join(root, 'team-a'));
        const error = await expectRejection(storage.check(), InputError);
        expect(error.message).to.equal('connector_init.path "team-a" leads outside the storage root through a symbolic link.');
        expect(await readdir(outside)).to.deep.equal([]);
      } finally {
        await rm(outside, { recursive: true, force: true });
      }
    });

    describe('a path under a symbolic link out of the root', () => {
      let outside: string;
      beforeEach(async () => {
        outside = await mkdtemp(path.join(tmpdir(), 'didyma-outside-'));
      });
      afterEach(() => rm(outside, { recursive: true, force: true }));

      it('is refused before any folder is made at the far end of the link', async () => {
        await symlink(outside, path.join(root, 'shared'));
        const deep = new StorageClasses({ filesystemRoot: root }).backend(FILESYSTEM_STORAGE, { path: 'shared/team-a/files' });
        const error = await expectRejection(deep.check(), InputError);
        expect(error.message).to.equal('connector_init.path "shared/team-a/files" leads outside the storage root through a symbolic link.');
        expect(error.message).to.not.include(outside);
        await expectRejection(deep.put(KEY, Readable.from([Buffer.from('x')]), { contentType: 'text/plain', maxBytes: 10 }), InputError);
        expect(await readdir(outside, { recursive: true }), 'made outside the root').to.deep.equal([]);
      });

      it('is refused when the link points at a folder that does not exist yet', async () => {
        await symlink(path.join(outside, 'later'), path.join(root, 'shared'));
        const deep = new StorageClasses({ filesystemRoot: root }).backend(FILESYSTEM_STORAGE, { path: 'shared/team-a' });
        await expectRejection(deep.check(), InputError);
        expect(await readdir(outside, { recursive: true }), 'made outside the root').to.deep.equal([]);
      });

      it('is accepted when the link stays inside the root', async () => {
        await mkdir(path.join(root, 'real'));
        await symlink(path.join(root, 'real'), path.join(root, 'alias'));
        const aliased = new StorageClasses({ filesystemRoot: root }).backend(FILESYSTEM_STORAGE, { path: 'alias/team-a' });
        await aliased.check();
        await aliased.put(KEY, Readable.from([Buffer.from('x')]), { contentType: 'text/plain', maxBytes: 10 });
        expect(await filesUnder(path.join(root, 'real'))).to.include(path.join('team-a', ...KEY.split('/')));
      });
    });
  });

  describe('configuration', () => {
    it('is refused when the platform has no filesystem root (production)', () => {
      const classes = new StorageClasses();
      expect(classes.names()).to.deep.equal(['didyma.storage.S3Storage']);
      expect(() => classes.validateInit(FILESYSTEM_STORAGE, { path: 'x' })).to.throw(
        InputError,
        'didyma.storage.FilesystemStorage is for development only and is not enabled on this platform. Known classes: didyma.storage.S3Storage.',
      );
      expect(() => classes.backend(FILESYSTEM_STORAGE, { path: 'x' })).to.throw(InputError, 'not enabled');
    });

    it('normalizes the path', () => {
      const classes = new StorageClasses({ filesystemRoot: root });
      expect(classes.validateInit(FILESYSTEM_STORAGE, { path: 'a/./b/' })).to.deep.equal({ path: 'a/b' });
      expect(classes.validateInit(FILESYSTEM_STORAGE, { path: './' })).to.deep.equal({ path: '.' });
    });

    for (const [value, message] of [
      ['../outside', 'connector_init.path must not contain "..".'],
      ['a/../../outside', 'connector_init.path must not contain "..".'],
      ['/etc', 'connector_init.path must be relative to the storage root, not absolute.'],
      ['C:/Windows', 'connector_init.path must be relative to the storage root, not absolute.'],
      ['a\\b', 'connector_init.path must use "/" as separator, not backslashes.'],
      ['a\u0000b', 'connector_init.path must not contain control characters.'],
      ['', 'connector_init.path must not be empty.'],
      [42, 'connector_init.path must be a string.'],
    ] as const) {
      it(`refuses path ${JSON.stringify(value)}`, () => {
        const classes = new StorageClasses({ filesystemRoot: root });
        expect(() => classes.validateInit(FILESYSTEM_STORAGE, { path: value })).to.throw(InputError, message);
      });
    }

    it('requires path and refuses other keys', () => {
      const classes = new StorageClasses({ filesystemRoot: root });
      expect(() => classes.validateInit(FILESYSTEM_STORAGE, {})).to.throw(InputError, 'connector_init.path is required.');
      expect(() => classes.validateInit(FILESYSTEM_STORAGE, { path: 'a', root: '/' })).to.throw(
        InputError,
        'connector_init.root is not accepted by didyma.storage.FilesystemStorage (accepted: path).',
      );
    });

    it('creates nothing before the first upload or check', async () => {
      await mkdir(path.join(root, 'unused'), { recursive: true });
      new StorageClasses({ filesystemRoot: root }).backend(FILESYSTEM_STORAGE, { path: 'later' });
      expect(await readdir(root)).to.deep.equal(['unused']);
    });
  });
});

async function expectRejection<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(type);
    return error as E;
  }
  throw new Error(`expected a rejection with ${type.name}`);
}
