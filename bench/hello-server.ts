// Baseline of the benchmark: a bare express "hello" on the same machine,
// same Node and same express as the platform's servers.
// usage: node --import tsx bench/hello-server.ts PORT
import express from 'express';

const port = Number(process.argv[2] ?? 0);
const app = express();
app.disable('x-powered-by');
app.get('/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
process.once('SIGTERM', () => server.close(() => process.exit(0)));
