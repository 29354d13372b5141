import { InputError } from '../../kernel/errors/errors.js';
import type { PutInfo } from './backend.js';

// The content type ends up in an HTTP header of the backend request and of
// later downloads, so only a well-formed media type gets through.
const TOKEN = "[a-z0-9!#$&^_.+'*`|~-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:\\s*;\\s*${TOKEN}=(?:${TOKEN}|"[^"\\\\\\p{Cc}]*"))*$`, 'iu');
const MAX_CONTENT_TYPE_LENGTH = 255;

export function assertPutInfo(info: PutInfo): void {
  if (info.contentType.length > MAX_CONTENT_TYPE_LENGTH || !MEDIA_TYPE.test(info.contentType)) {
    throw new InputError(`Invalid content type ${JSON.stringify(info.contentType)}.`);
  }
  // The limit comes from platform code, not from a request: a bad one is a bug.
  if (!Number.isSafeInteger(info.maxBytes) || info.maxBytes < 0) {
    throw new RangeError(`maxBytes must be a non-negative integer, got ${info.maxBytes}.`);
  }
}
