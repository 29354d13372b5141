// S3 multipart uploads need parts of at least 5 MiB (except the last) and at
// most 10,000 of them. Buffering one part at a time keeps memory per upload
// bounded by the part size, whatever the file size.

const MIB = 1024 * 1024;
const DEFAULT_PART_SIZE = 8 * MIB;
const MAX_PARTS = 10_000;

/** The smallest whole-MiB part size (at least 8 MiB) that fits `maxBytes` in 10,000 parts. */
export function partSizeFor(maxBytes: number): number {
  return Math.max(DEFAULT_PART_SIZE, Math.ceil(maxBytes / MAX_PARTS / MIB) * MIB);
}

/** Regroups chunks into buffers of at least `partSize` bytes; only the last one may be smaller. */
export async function* inParts(chunks: AsyncIterable<Buffer>, partSize: number): AsyncGenerator<Buffer, void, undefined> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of chunks) {
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (pendingBytes >= partSize) {
      yield Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes);
}
