import { toInferenceRequest } from '../../infra/connectors/open-inference/tensors.js';
import { ModelServers, startMlserver } from '../../test/support/model-servers.js';
import { script, startNode, vmHwm, waitReady, type Child } from './processes.js';

// The model server of a benchmark run, behind the platform's Open Inference
// connectors: real MLServer with a scikit-learn iris classifier (the default),
// or the demo Node server with a fixed inference time (BENCH_MODEL_SERVER=demo).
// Both serve `iris-classifier` version 1.

export type ModelServerKind = 'mlserver' | 'demo';

export const MODEL = { name: 'iris-classifier', version: '1' };

export interface BenchModelServer {
  kind: ModelServerKind;
  /** What the table says it is, e.g. "MLServer 1.7.1, scikit-learn iris". */
  label: string;
  url: string;
  /** The invocation's request.body (JSON text), the same in every call. */
  body: string;
  /** The platform model's input_schema for that body. */
  inputSchema: Record<string, unknown>;
  /** The direct call: what the platform's Open Inference proxy sends for `body`, to the same model. */
  inferUrl: string;
  inferBody: string;
  /** Its process, for its CPU time (bench/lib/cpu.ts). */
  pid: number | undefined;
  /** Peak RSS (VmHWM) of its process, by name; read before close(). */
  peakRss(): Record<string, number>;
  close(): Promise<void>;
}

export function modelServerKind(value: string): ModelServerKind {
  if (value === 'mlserver' || value === 'demo') return value;
  throw new Error(`BENCH_MODEL_SERVER=${value}: expected mlserver (the default) or demo`);
}

const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'];

/** Starts the model server and checks that one direct inference answers 200. */
export async function startModelServer(
  kind: ModelServerKind,
  options: { pythonVenv?: string; port: number; delayMs: number; version?: string; env: Record<string, string>; logFile: string },
): Promise<BenchModelServer> {
  const server = kind === 'mlserver' ? await mlserver(options.pythonVenv) : await demo(options);
  try {
    const reply = await fetch(server.inferUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: server.inferBody });
    if (!reply.ok) throw new Error(`the model server answered a direct inference with ${reply.status}: ${await reply.text()}`);
    return server;
  } catch (error) {
    await server.close();
    throw error;
  }
}

function direct(url: string, body: string) {
  return { inferUrl: `${url}/v2/models/${MODEL.name}/versions/${MODEL.version}/infer`, inferBody: JSON.stringify(toInferenceRequest(body)) };
}

async function mlserver(venv: string | undefined): Promise<BenchModelServer> {
  if (!venv) throw new Error('TEST_PYTHON_VENV is not set: MLServer comes from the python service (`bash scripts/services/all.sh start python`, then export `bash scripts/services/all.sh env python`), or set BENCH_MODEL_SERVER=demo.');
  const servers = new ModelServers(venv);
  try {
    const started = await startMlserver(servers, MODEL, 240_000);
    const metadata = (await (await fetch(`${started.url}/v2`)).json()) as { version?: string };
    const body = JSON.stringify([started.summary.sample]);
    const pid = started.process.child.pid;
    let peak = 0;
    return {
      kind: 'mlserver',
      label: `${metadata.version ? `MLServer ${metadata.version}` : 'MLServer'}, scikit-learn iris`,
      url: started.url,
      body,
      inputSchema: { type: 'json', schema: { type: 'array', minItems: 1, items: { type: 'array', minItems: 4, maxItems: 4, items: { type: 'number' } } } },
      ...direct(started.url, body),
      pid,
      peakRss: () => ({ mlserver: (peak = Math.max(peak, vmHwm(pid))) }),
      close: () => servers.close(),
    };
  } catch (error) {
    await servers.close();
    throw error;
  }
}

async function demo(options: { port: number; delayMs: number; version?: string; env: Record<string, string>; logFile: string }): Promise<BenchModelServer> {
  const url = `http://127.0.0.1:${options.port}`;
  const child: Child = startNode('model-server', script('bench/model-server.ts', [String(options.port), String(options.delayMs), ...(options.version ? [options.version] : [])]), options.env, options.logFile);
  try {
    await waitReady(child, `${url}/v2/health/ready`);
  } catch (error) {
    await child.stop();
    throw error;
  }
  const body = JSON.stringify({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });
  return {
    kind: 'demo',
    label: `demo model server, ${options.delayMs} ms model`,
    url,
    body,
    inputSchema: {
      type: 'json',
      schema: { type: 'object', additionalProperties: false, required: FEATURES, properties: Object.fromEntries(FEATURES.map((k) => [k, { type: 'number', minimum: 0 }])) },
    },
    ...direct(url, body),
    pid: child.process.pid,
    peakRss: () => ({ 'model-server': child.peakRss() }),
    close: () => child.stop(),
  };
}
