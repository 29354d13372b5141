// `make bench-kube`: the proxy configuration at scale on the test control
// plane (scripts/services/kube.sh). BENCH_KUBE_DEPLOYMENTS (5000)
// ModelDeployments in BENCH_KUBE_WORKSPACES (500) workspaces, each with its
// Secret, are written the way the API and the resync write them (infra/kube's
// DesiredStateWriter, BENCH_KUBE_CONCURRENCY (16) at once; not through the
// HTTP API, which would add PostgreSQL and the API server's own work to what
// is measured), in front of a `didyma operator` process (from the build) and
// one executor's resolver (bench/kube-resolver.ts). Each talks to the API
// server through a counting proxy (bench/lib/kube-proxy.ts). Three phases:
// create every deployment, change one per workspace, delete them all; for
// each, the time until the resolver resolves every deployment (sees every
// change), the requests and answer bytes per change of the operator and of
// the resolver, and both processes' memory. Writes
// bench/results/kube-config-<date>.json. Nothing here is a test.
//
// Environment: TEST_KUBECONFIG (scripts/services/all.sh env kube); optional
// BENCH_NODE_OPTIONS: the operator's node options (e.g. a heap cap).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../infra/kube/constants.js';
import type { DesiredDeployment } from '../infra/kube/desired.js';
import { proxyConfigSelector, resourceName } from '../infra/kube/names.js';
import { DesiredStateWriter } from '../infra/kube/writer.js';
import { createLogger } from '../infra/logging/logger.js';
import { kubeconfigPath, operatorEnv, testNamespace } from '../test/support/kube.js';
import { countingProxy, countsSince, total, type RequestCounts } from './lib/kube-proxy.js';
import { cli, freePort, script, startNode, waitReady, type Child } from './lib/processes.js';
import type { BenchDeployment, ResolverStatus } from './kube-resolver.js';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const DEPLOYMENTS = Number(env('BENCH_KUBE_DEPLOYMENTS', '5000'));
const WORKSPACES = Number(env('BENCH_KUBE_WORKSPACES', '500'));
const CONCURRENCY = Number(env('BENCH_KUBE_CONCURRENCY', '16'));
const PREFIX = 'didyma-proxy-config';
const UPDATED_MARK = '/updated';
const PHASE_TIMEOUT_MS = 30 * 60_000;

/** A model server that answers every health check at once. */
async function healthServer() {
  const server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.includes('/health/') ? '{}' : '{"name":"x"}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

function desired(d: BenchDeployment, url: string): DesiredDeployment {
  return {
    kind: 'deployment',
    workspace: d.workspace,
    key: d.key,
    registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: url, tracking_server_url: url } },
    serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: url } },
    secrets: { server_proxy_pat: `pat-${d.id}` },
    // One version per deployment: the private server names it by a digest of the sealed credentials.
    credentialsVersion: d.id.toString(16).padStart(32, '0'),
  };
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/** The bench's child processes: a wait ends as soon as one of them has exited. */
const children: Child[] = [];

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = PHASE_TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exited = children.find((child) => child.process.exitCode !== null);
    if (exited) throw new Error(`${exited.name} exited with code ${exited.process.exitCode} while waiting for ${what} (see its log)`);
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** The operator's figures from its /metrics. */
async function operatorMetrics(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    reconciled: (result: string) => value(new RegExp(`didyma_operator_reconciles_total\\{kind="ModelDeployment",result="${result}"\\} (\\d+)`)),
    rss: value(/^didyma_process_resident_memory_bytes (\d+)/m),
    heapUsed: value(/^didyma_nodejs_heap_size_used_bytes (\d+)/m),
    leader: value(/^didyma_operator_leader (\d+)/m),
  };
}

const resolverStatus = async (url: string) => (await (await fetch(`${url}/status`)).json()) as ResolverStatus;

interface PhaseFigures {
  changes: number;
  /** From the first write to the resolver resolving (seeing) every change. */
  resolvedSeconds: number;
  /** From the first write to the operator having reconciled every change. */
  reconciledSeconds: number;
  operator: { requests: Record<string, number>; requestsPerChange: number; bytesPerChange: number };
  resolver: { requests: Record<string, number>; requestsPerChange: number; bytesPerChange: number };
}

function perChange(counts: RequestCounts, changes: number) {
  return { requests: counts.requests, requestsPerChange: total(counts.requests) / changes, bytesPerChange: Math.round(total(counts.bytes) / changes) };
}

async function main() {
  const started = new Date();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-bench-kube-'));
  const kube = await testNamespace('dy-bench');
  const api = await kube.api();
  const writer = new DesiredStateWriter(kube, createLogger('silent'));
  const server = await healthServer();
  const perWorkspace = Math.ceil(DEPLOYMENTS / WORKSPACES);
  const deployments: BenchDeployment[] = Array.from({ length: DEPLOYMENTS }, (_, i) => ({ id: i + 1, workspaceId: Math.floor(i / perWorkspace) + 1, workspace: `bench-${Math.floor(i / perWorkspace)}`, key: `d${i % perWorkspace}` }));
  const file = path.join(work, 'deployments.json');
  fs.writeFileSync(file, JSON.stringify(deployments));

  const operatorProxy = await countingProxy(kubeconfigPath(), kube.namespace, path.join(work, 'operator.kubeconfig'));
  const resolverProxy = await countingProxy(kubeconfigPath(), kube.namespace, path.join(work, 'resolver.kubeconfig'));
  try {
    const resolverPort = await freePort();
    const resolverUrl = `http://127.0.0.1:${resolverPort}`;
    const resolverEnv = operatorEnv(kube.namespace, { KUBECONFIG: resolverProxy.kubeconfig, DIDYMA_LOG_LEVEL: 'warn', BENCH_DEPLOYMENTS_FILE: file, BENCH_RESOLVER_PORT: String(resolverPort), BENCH_UPDATED_MARK: UPDATED_MARK });
    const resolver = startNode('resolver', script('bench/kube-resolver.ts', []), resolverEnv, path.join(work, 'resolver.log'));
    children.push(resolver);
    await waitReady(resolver, `${resolverUrl}/status`);
    const operatorPort = await freePort();
    const operatorUrl = `http://127.0.0.1:${operatorPort}`;
    const operatorConfig = { KUBECONFIG: operatorProxy.kubeconfig, DIDYMA_LOG_LEVEL: 'warn', DIDYMA_OPERATOR_PORT: String(operatorPort), DIDYMA_OPERATOR_PROBE_SECONDS: '3600', DIDYMA_LEASE_SECONDS: '15' };
    const operator = startNode('operator', cli(['operator']), operatorEnv(kube.namespace, operatorConfig), path.join(work, 'operator.log'));
    children.push(operator);
    await waitReady(operator, `${operatorUrl}/healthz`);
    await until('the operator to lead', async () => ((await operatorMetrics(operatorUrl)).leader === 1 ? true : undefined));
    await sleep(2000);
    const idle = { operator: await operatorMetrics(operatorUrl), resolver: await resolverStatus(resolverUrl) };
    console.log(`bench-kube: ${DEPLOYMENTS} deployments in ${WORKSPACES} workspaces, namespace ${kube.namespace}, logs in ${work}`);

    async function phase(name: string, changes: number, write: () => Promise<void>, resolved: (s: ResolverStatus) => number | undefined, reconciled: () => Promise<boolean>): Promise<PhaseFigures> {
      const before = { operator: operatorProxy.counts(), resolver: resolverProxy.counts() };
      const t0 = Date.now();
      await write();
      console.log(`bench-kube: ${name}: written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const resolvedAt = await until(`${name}: the resolver`, async () => resolved(await resolverStatus(resolverUrl)));
      await until(`${name}: the operator`, async () => ((await reconciled()) ? true : undefined));
      const reconciledAt = Date.now();
      await sleep(3000); // the last watch events reach the counts
      const figures = {
        changes,
        resolvedSeconds: (resolvedAt - t0) / 1000,
        reconciledSeconds: (reconciledAt - t0) / 1000,
        operator: perChange(countsSince(before.operator, operatorProxy.counts()), changes),
        resolver: perChange(countsSince(before.resolver, resolverProxy.counts()), changes),
      };
      console.log(`bench-kube: ${name}: resolved in ${figures.resolvedSeconds} s, reconciled in ${figures.reconciledSeconds} s; requests per change: operator ${figures.operator.requestsPerChange.toFixed(2)}, resolver ${figures.resolver.requestsPerChange.toFixed(2)}`);
      return figures;
    }

    const ready = () => operatorMetrics(operatorUrl).then((m) => m.reconciled('ready'));
    const readyBefore = await ready();
    const create = await phase(
      'create',
      DEPLOYMENTS,
      () => pool(deployments, CONCURRENCY, (d) => writer.apply(desired(d, server.url))),
      (s) => s.allResolvedAt,
      async () => (await ready()) - readyBefore >= DEPLOYMENTS,
    );
    const full = { operator: await operatorMetrics(operatorUrl), resolver: await resolverStatus(resolverUrl) };
    const configMaps = (await api.core.listNamespacedConfigMap({ namespace: kube.namespace, labelSelector: proxyConfigSelector(PREFIX) })).items;
    const sizes = configMaps.map((c) => Buffer.byteLength(JSON.stringify(c.data ?? {})));

    // One deployment per workspace points at another URL: each changes its workspace's ConfigMap only.
    const changed = deployments.filter((d) => d.key === 'd0');
    const readyAtUpdate = await ready();
    const update = await phase(
      'update',
      changed.length,
      () => pool(changed, CONCURRENCY, (d) => writer.apply(desired(d, `${server.url}${UPDATED_MARK}`))),
      (s) => (s.updated >= changed.length ? s.lastChangeAt : undefined),
      async () => (await ready()) - readyAtUpdate >= changed.length,
    );

    const finalizedBefore = await operatorMetrics(operatorUrl).then((m) => m.reconciled('finalized'));
    const remove = await phase(
      'delete',
      DEPLOYMENTS,
      () => pool(deployments, CONCURRENCY, (d) => writer.removeByName('deployment', resourceName('deployment', d.workspace, d.key))),
      (s) => (s.entries === 0 ? s.lastChangeAt : undefined),
      async () => {
        const left = (await api.list(API_VERSION, 'ModelDeployment', kube.namespace)).items.length;
        const maps = (await api.core.listNamespacedConfigMap({ namespace: kube.namespace, labelSelector: proxyConfigSelector(PREFIX) })).items.length;
        return left === 0 && maps === 0 && (await operatorMetrics(operatorUrl).then((m) => m.reconciled('finalized'))) > finalizedBefore;
      },
    );
    const peaks = { operator: operator.peakRss(), resolver: resolver.peakRss() };
    // The whole run's requests, start-up included: one LIST and one WATCH per collection (a watch the API server ends is opened again).
    const run = { operator: operatorProxy.counts().requests, resolver: resolverProxy.counts().requests };

    const report = {
      started: started.toISOString(),
      host: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
      settings: { deployments: DEPLOYMENTS, workspaces: WORKSPACES, concurrency: CONCURRENCY, operatorWorkers: 2, operatorNodeOptions: process.env.BENCH_NODE_OPTIONS ?? '', created: 'DesiredStateWriter (server-side apply of Secret and ModelDeployment), not the HTTP API' },
      configMaps: { count: configMaps.length, largestDataBytes: Math.max(...sizes), totalDataBytes: sizes.reduce((a, b) => a + b, 0) },
      phases: { create, update, delete: remove },
      wholeRun: run,
      memory: {
        operator: { idleRss: idle.operator.rss, idleHeapUsed: idle.operator.heapUsed, fullRss: full.operator.rss, fullHeapUsed: full.operator.heapUsed, peakRss: peaks.operator, runtime: 'build (bin/didyma.js)' },
        resolver: { idleRss: idle.resolver.rss, idleHeapUsed: idle.resolver.heapUsed, fullRss: full.resolver.rss, fullHeapUsed: full.resolver.heapUsed, peakRss: peaks.resolver, runtime: 'tsx (RSS includes the loader)' },
      },
    };
    const resultsDir = path.resolve(new URL('.', import.meta.url).pathname, 'results');
    const out = path.join(resultsDir, `kube-config-${started.toISOString().slice(0, 19).replace(/:/g, '-')}Z.json`);
    fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(JSON.stringify(report, null, 2));
    console.log(`written to ${out}`);
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await Promise.all([operatorProxy.close(), resolverProxy.close(), server.close()]);
  }
}

await main();
