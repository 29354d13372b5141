// How the paced load generator (paced.ts) knows where an HTTP/1.1 answer
// ends on a keep-alive socket, without keeping its body.

const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * Reads one HTTP/1.1 answer from successive chunks: the status, and its end
 * by `content-length` or chunked framing. The body is skipped, not kept.
 * One reader per answer.
 */
export class AnswerReader {
  private pending: Buffer = Buffer.alloc(0);
  private status = '';
  private close = false;
  private remaining = -1;
  private chunked = false;
  private chunkState: 'size' | 'data' | 'after-data' | 'last' = 'size';

  /** The answer once it is complete; undefined while more bytes are needed. Throws on a malformed answer. */
  read(chunk: Buffer): { status: string; close: boolean } | undefined {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    if (!this.status && !this.readHead()) return undefined;
    const done = this.chunked ? this.skipChunks() : this.skipBody();
    return done ? { status: this.status, close: this.close } : undefined;
  }

  private readHead(): boolean {
    const end = this.pending.indexOf(HEADER_END);
    if (end < 0) {
      if (this.pending.length > MAX_HEAD_BYTES) throw new Error('answer head too large');
      return false;
    }
    const lines = this.pending.toString('latin1', 0, end).split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!status) throw new Error(`not an HTTP answer: ${lines[0]}`);
    this.status = status[1]!;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim().toLowerCase();
      if (name === 'content-length') this.remaining = Number(value);
      else if (name === 'transfer-encoding') this.chunked = value.includes('chunked');
      else if (name === 'connection') this.close = value === 'close';
    }
    // 1xx, 204 and 304 answers never have a body.
    if (/^(1..|204|304)$/.test(this.status)) this.remaining = 0;
    if (!this.chunked && !(this.remaining >= 0)) throw new Error('an answer without a length');
    this.pending = this.pending.subarray(end + HEADER_END.length);
    return true;
  }

  private skipBody(): boolean {
    const taken = Math.min(this.remaining, this.pending.length);
    this.remaining -= taken;
    this.pending = this.pending.subarray(taken);
    return this.remaining === 0;
  }

  /** Chunks until the last (zero-size) one and the CRLF after it; trailers are not expected. */
  private skipChunks(): boolean {
    for (;;) {
      if (this.chunkState === 'data') {
        if (!this.skipBody()) return false;
        this.chunkState = 'after-data';
      } else if (this.chunkState === 'size') {
        const lineEnd = this.pending.indexOf('\r\n');
        if (lineEnd < 0) return false;
        const size = Number.parseInt(this.pending.toString('latin1', 0, lineEnd), 16);
        if (!(size >= 0)) throw new Error('malformed chunk size');
        this.pending = this.pending.subarray(lineEnd + 2);
        this.remaining = size;
        this.chunkState = size === 0 ? 'last' : 'data';
      } else {
        // The CRLF after a chunk's data, or after the last chunk.
        if (this.pending.length < 2) return false;
        this.pending = this.pending.subarray(2);
        if (this.chunkState === 'last') return true;
        this.chunkState = 'size';
      }
    }
  }
}
