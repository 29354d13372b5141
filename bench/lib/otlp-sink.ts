import http from 'node:http';
import type { AddressInfo } from 'node:net';

// (9)'s collector: an OTLP/HTTP endpoint that counts the spans a traced
// server exports and answers as a collector does, without storing them, so
// that the CPU per exported span can be told and no collector's own work
// competes with the measured processes on the host.

export interface OtlpSink {
  /** Its base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Spans received so far. */
  spans(): number;
  close(): Promise<void>;
}

/** Reads a protobuf varint at `at`: its value and where the next field starts. */
function varint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = buf[at++];
    if (byte === undefined) throw new Error('truncated varint');
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, at];
  }
}

/** The length-delimited fields numbered `field` of the protobuf message in buf[start, end). */
function* messages(buf: Buffer, start: number, end: number, field: number): Generator<[number, number]> {
  let at = start;
  while (at < end) {
    const [key, next] = varint(buf, at);
    at = next;
    const wire = key & 7;
    if (wire === 0) at = varint(buf, at)[1];
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const [length, from] = varint(buf, at);
      if (key >>> 3 === field) yield [from, from + length];
      at = from + length;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
}

/** Spans in an ExportTraceServiceRequest: resource_spans (1) → scope_spans (2) → spans (2). */
export function countProtobufSpans(body: Buffer): number {
  let count = 0;
  for (const [rs, rsEnd] of messages(body, 0, body.length, 1)) {
    for (const [ss, ssEnd] of messages(body, rs, rsEnd, 2)) for (const _span of messages(body, ss, ssEnd, 2)) count++;
  }
  return count;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let spans = 0;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    // OTLP/HTTP in protobuf, the SDK's default protocol (the servers of (9) keep it).
    if (req.method !== 'POST' || req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/x-protobuf') return void res.writeHead(415).end();
    spans += countProtobufSpans(Buffer.concat(chunks));
    // An empty ExportTraceServiceResponse: everything accepted.
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
