import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { RequestHandler } from 'express';

/**
 * The page only loads its own files and calls its own server: Swagger UI's
 * stylesheet draws its icons from `data:` images, nothing else is relaxed.
 */
export const API_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const require = createRequire(import.meta.url);
const gzip = promisify(zlib.gzip);

interface Asset {
  type: string;
  body: Buffer;
}

// Read once per process, however many servers it runs.
const files = new Map<string, Buffer>();
function read(path: string): Buffer {
  let body = files.get(path);
  if (!body) files.set(path, (body = fs.readFileSync(path)));
  return body;
}

const packaged = (file: string, type: string): Asset => ({ type, body: read(require.resolve(`swagger-ui-dist/${file}`)) });

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function page(title: string): Asset {
  const text = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(title)}</title>
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/boot.js"></script>
</body>
</html>
`;
  return { type: 'text/html; charset=utf-8', body: Buffer.from(text) };
}

/**
 * `GET /docs`: the server's OpenAPI document (`/openapi.json`) in Swagger UI,
 * served from the npm package with its own strict Content-Security-Policy;
 * "Try it out" calls this same server with the bearer token the reader types.
 * Outside the document, like `/healthz`: exact paths for `fixedEndpoints`.
 */
export function apiDocsEndpoints(title: string): Record<string, RequestHandler> {
  const assets: Record<string, Asset> = {
    '/docs': page(title),
    '/docs/favicon-32x32.png': packaged('favicon-32x32.png', 'image/png'),
    '/docs/swagger-ui.css': packaged('swagger-ui.css', 'text/css; charset=utf-8'),
    '/docs/swagger-ui-bundle.js': packaged('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
    '/docs/boot.js': { type: 'text/javascript; charset=utf-8', body: read(fileURLToPath(new URL('./api-docs/boot.js', import.meta.url))) },
  };
  return Object.fromEntries(Object.entries(assets).map(([path, asset]) => [path, serve(asset, path === '/docs')]));
}

function serve(asset: Asset, isPage: boolean): RequestHandler {
  return async (req, res) => {
    // The bundle is 1.7 MB, a quarter of that compressed: compressed once per process, off the event loop.
    const body = !isPage && acceptsGzip(req.headers['accept-encoding']) ? await gzipped(asset.body) : undefined;
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Content-Security-Policy', API_DOCS_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (!isPage) {
      // The package's files change only with a new release of the server: a browser may keep them a while.
      res.setHeader('Cache-Control', 'public, max-age=3600');
      res.setHeader('Vary', 'Accept-Encoding');
    }
    if (body) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', (body ?? asset.body).length);
    res.end(body ?? asset.body);
  };
}

const compressed = new Map<Buffer, Promise<Buffer>>();
function gzipped(body: Buffer): Promise<Buffer> {
  let zipped = compressed.get(body);
  if (!zipped) {
    zipped = gzip(body);
    compressed.set(body, zipped);
  }
  return zipped;
}

/** `gzip` listed, and not refused with `q=0`. */
export function acceptsGzip(header: string | undefined): boolean {
  const entry = (header ?? '').split(',').map((part) => part.trim().toLowerCase()).find((part) => part === 'gzip' || part.startsWith('gzip;'));
  if (!entry) return false;
  const quality = /;\s*q=([0-9.]+)/.exec(entry)?.[1];
  return quality === undefined || Number(quality) > 0;
}
