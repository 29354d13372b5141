import { expect } from 'chai';
import { serviceNameOf, tracingRequested } from './preload.js';
import { instrumentationNames } from './tracing.js';

describe('tracing from the standard OTEL variables', () => {
  it('is on with an exporter or an OTLP endpoint, off without, when disabled, or with the exporter none', () => {
    expect(tracingRequested({})).to.equal(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).to.equal(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).to.equal(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).to.equal(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).to.equal(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).to.equal(false);
  });

  it('names each process after its command', () => {
    expect(serviceNameOf(['node', 'didyma', 'serve', 'public'])).to.equal('didyma-public');
    expect(serviceNameOf(['node', 'didyma', 'serve'])).to.equal('didyma-all');
    expect(serviceNameOf(['node', 'didyma', 'executor'])).to.equal('didyma-executor');
    expect(serviceNameOf(['node', 'didyma'])).to.equal('didyma');
  });

  it('narrows the instrumentations by OTEL_NODE_ENABLED_INSTRUMENTATIONS and OTEL_NODE_DISABLED_INSTRUMENTATIONS', () => {
    expect(instrumentationNames({})).to.deep.equal(['http', 'pg', 'amqplib', 'pino']);
    expect(instrumentationNames({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http, pg' })).to.deep.equal(['http', 'pg']);
    expect(instrumentationNames({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pino' })).to.deep.equal(['http', 'pg', 'amqplib']);
  });
});
