import { expect } from 'chai';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startOtlpSink } from './otlp-sink.js';

describe('bench (9): the OTLP sink counts the spans a server exports', () => {
  /** Spans from two tracers (two scopes) of one provider, as an exporter batches them. */
  function spans(): ReadableSpan[] {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    for (const [scope, n] of [['didyma', 3], ['pg', 2]] as const) {
      for (let i = 0; i < n; i++) provider.getTracer(scope).startSpan(`span ${i}`, { attributes: { 'db.query.text': 'select 1', n: i } }).end();
    }
    return exporter.getFinishedSpans();
  }

  it('sent by the OTLP/HTTP protobuf exporter, across scopes and requests', async () => {
    const sink = await startOtlpSink();
    const exporter = new OTLPTraceExporter({ url: `${sink.url}/v1/traces` });
    const send = (batch: ReadableSpan[]) => new Promise<number>((resolve) => exporter.export(batch, (result) => resolve(result.code)));
    try {
      expect(await send(spans())).to.equal(0); // ExportResultCode.SUCCESS
      expect(sink.spans()).to.equal(5);
      expect(await send(spans().slice(0, 2))).to.equal(0);
      expect(sink.spans()).to.equal(7);
    } finally {
      await exporter.shutdown();
      await sink.close();
    }
  });
});
