import { randomUUID } from 'node:crypto';
import { lstat, mkdir, open, readFile, readlink, realpath, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { ObjectDownload, PutInfo, StorageBackend, StoredObject } from './backend.js';
import { ContentMeter, deferErrors } from './content-meter.js';
import { assertObjectKey } from './object-key.js';
import { assertPutInfo } from './put-info.js';

// Development storage: objects are files under one folder, their content type
// sits in a small JSON file under `.meta/`. Object keys never have segments
// starting with a dot, so neither `.meta` nor the `.partial` files of running
// uploads can collide with an object.

const META_FOLDER = '.meta';
// As many links as Linux follows in one path (its ELOOP limit).
const MAX_LINKS = 40;

interface ObjectMeta {
  contentType: string;
}

export class FilesystemStorage implements StorageBackend {
  /**
   * @param root   absolute folder the platform allows (`filesystemRoot`)
   * @param folder absolute folder of this configuration, inside `root`
   * @param label  the configured relative path, for messages (the root stays private)
   */
  constructor(
    private readonly root: string,
    private readonly folder: string,
    private readonly label: string,
  ) {
    if (!isInside(root, folder)) throw new InputError(`connector_init.path ${JSON.stringify(label)} is outside the storage root.`);
  }

  async put(objectKey: string, stream: Readable, info: PutInfo): Promise<StoredObject> {
    deferErrors(stream);
    assertObjectKey(objectKey);
    assertPutInfo(info);
    const target = this.pathOf(objectKey);
    await this.makeFolder(path.dirname(target));
    // Written next to the target and renamed at the end, so a reader never sees
    // half a file and a failed upload never replaces an existing one.
    const partial = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.partial`);
    const meter = new ContentMeter(info.maxBytes);
    // Opened before the copy starts: a write stream given a path opens it in the
    // background, so a source failing at once could let that open land after the
    // clean-up below and leave a stray partial file.
    const handle = await open(partial, 'wx', 0o600);
    try {
      await pipeline(stream, (chunks: AsyncIterable<unknown>) => meter.measure(chunks), handle.createWriteStream());
      await this.writeMeta(objectKey, { contentType: info.contentType });
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return meter.result();
  }

  async get(objectKey: string): Promise<ObjectDownload> {
    assertObjectKey(objectKey);
    const meta = await this.readMeta(objectKey);
    const handle = await openExistingFile(this.pathOf(objectKey));
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new NotFoundError('File not found.');
      return { stream: handle.createReadStream(), size: stats.size, contentType: meta?.contentType };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async remove(objectKey: string): Promise<void> {
    assertObjectKey(objectKey);
    await rm(this.pathOf(objectKey), { force: true });
    await rm(this.metaPathOf(objectKey), { force: true });
  }

  async check(): Promise<void> {
    try {
      await this.makeFolder(this.folder);
      const probe = path.join(this.folder, `.check-${randomUUID()}`);
      await writeFile(probe, '', { flag: 'wx' });
      await rm(probe, { force: true });
    } catch (error) {
      if (error instanceof InputError) throw error;
      throw new InputError(`folder ${JSON.stringify(this.label)} is not writable under the storage root: ${reasonOf(error)}.`);
    }
  }

  /** Checks the real location, links followed, before and after creating it, so a link out of the root never gets a folder made at its far end. */
  private async makeFolder(folder: string): Promise<void> {
    await this.refuseOutsideRoot(folder);
    await mkdir(folder, { recursive: true });
    await this.refuseOutsideRoot(folder);
  }

  private async refuseOutsideRoot(target: string): Promise<void> {
    if (isInside(await realLocation(this.root), await realLocation(target))) return;
    throw new InputError(`connector_init.path ${JSON.stringify(this.label)} leads outside the storage root through a symbolic link.`, [
      { field: 'connector_init.path', message: 'leads outside the storage root through a symbolic link' },
    ]);
  }

  private pathOf(objectKey: string): string {
    return this.inside(path.join(this.folder, ...objectKey.split('/')));
  }

  private metaPathOf(objectKey: string): string {
    return this.inside(path.join(this.folder, META_FOLDER, ...objectKey.split('/')) + '.json');
  }

  /** Second line of defence after assertObjectKey: never touch a path outside the folder. */
  private inside(candidate: string): string {
    if (!isInside(this.folder, candidate)) throw new InputError('Invalid object key: it leaves the storage folder.');
    return candidate;
  }

  private async writeMeta(objectKey: string, meta: ObjectMeta): Promise<void> {
    const target = this.metaPathOf(objectKey);
    await this.makeFolder(path.dirname(target));
    await writeFile(target, JSON.stringify(meta), { mode: 0o600 });
  }

  private async readMeta(objectKey: string): Promise<ObjectMeta | undefined> {
    try {
      return JSON.parse(await readFile(this.metaPathOf(objectKey), 'utf8')) as ObjectMeta;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }
}

async function openExistingFile(file: string): Promise<FileHandle> {
  try {
    return await open(file, 'r');
  } catch (error) {
    if (isMissing(error)) throw new NotFoundError('File not found.');
    throw error;
  }
}

/**
 * Where `target` is or would be once created: the real path of its deepest
 * existing ancestor, links followed (dangling ones too), joined with the part still missing.
 */
async function realLocation(target: string): Promise<string> {
  const missing: string[] = [];
  let existing = target;
  for (let links = 0; ; ) {
    try {
      return path.join(await realpath(existing), ...missing);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(existing) === existing) throw error;
      const entry = await lstat(existing).catch(() => undefined);
      if (!entry) {
        missing.unshift(path.basename(existing));
        existing = path.dirname(existing);
      } else if (entry.isSymbolicLink() && ++links <= MAX_LINKS) {
        existing = path.resolve(path.dirname(existing), await readlink(existing));
      } else {
        throw error;
      }
    }
  }
}

export function isInside(folder: string, candidate: string): boolean {
  const relative = path.relative(folder, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'ENOSPC') return 'no space left on the device';
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'a file is in the way of the folder';
  // The code, not the message: messages of fs errors carry absolute paths.
  if (code) return code;
  return error instanceof Error ? error.message : String(error);
}
