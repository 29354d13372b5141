import path from 'node:path';
import { InputError } from '../../kernel/errors/errors.js';
import type { StorageClass, StorageContext } from './backend.js';
import { FilesystemStorage } from './filesystem-storage.js';
import { fieldError, initObject, requiredString } from './init-fields.js';

export const FILESYSTEM_STORAGE = 'didyma.storage.FilesystemStorage';

const MAX_PATH_LENGTH = 255;
const CONTROL_CHARACTER = /\p{Cc}/u;

// A type alias, not an interface: it must fit ConnectorInit's index signature.
export type FilesystemInit = {
  /** Folder relative to the platform's filesystem root, `/`-separated, no `..`. */
  readonly path: string;
};

/** Development only: files on the local disk of the process. */
export const filesystemStorageClass: StorageClass<FilesystemInit> = {
  name: FILESYSTEM_STORAGE,
  secretKeys: [],

  validateInit(init: unknown): FilesystemInit {
    const fields = initObject(init, ['path'], FILESYSTEM_STORAGE);
    return { path: relativeFolder(requiredString(fields, 'path')) };
  },

  create(init: FilesystemInit, options: StorageContext): FilesystemStorage {
    if (!options.filesystemRoot) throw notEnabledError();
    const root = path.resolve(options.filesystemRoot);
    const folder = relativeFolder(init.path);
    return new FilesystemStorage(root, path.resolve(root, ...folder.split('/')), folder);
  },
};

export function notEnabledError(): InputError {
  return new InputError(`${FILESYSTEM_STORAGE} is for development only and is not enabled on this platform.`, [{ field: 'storage_class', message: 'not enabled on this platform' }]);
}

/** A normalized relative folder (`a/b`, or `.` for the root itself), refusing anything that could leave the root. */
function relativeFolder(value: string): string {
  const problem = folderProblem(value);
  if (problem) throw fieldError('connector_init.path', `connector_init.path ${problem}`);
  const normalized = path.posix.normalize(value).replace(/\/+$/, '');
  return normalized === '' ? '.' : normalized;
}

function folderProblem(value: string): string | undefined {
  if (value.length > MAX_PATH_LENGTH) return `must be at most ${MAX_PATH_LENGTH} characters`;
  if (CONTROL_CHARACTER.test(value)) return 'must not contain control characters';
  if (value.includes('\\')) return 'must use "/" as separator, not backslashes';
  if (value.startsWith('/') || /^[a-z]:/i.test(value)) return 'must be relative to the storage root, not absolute';
  if (value.split('/').includes('..')) return 'must not contain ".."';
  return undefined;
}
