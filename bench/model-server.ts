// The model server of the benchmark: the demo Open Inference server with a
// fixed inference time standing in for a real model's compute.
// usage: node --import tsx bench/model-server.ts PORT DELAY_MS [VERSION]
import { createDemoModelServer } from '../demo/model-server/server.js';

const port = Number(process.argv[2] ?? 0);
const inferenceDelayMs = Number(process.argv[3] ?? 0);
const version = process.argv[4];
const server = createDemoModelServer({ inferenceDelayMs, ...(version ? { version } : {}) });
await server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
