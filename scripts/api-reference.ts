// Writes docs/api.md from the OpenAPI documents the three servers serve
// (`npm run docs:api`). The documents stay the one source of truth: this page
// is an index of their operations, and scripts/api-reference.test.ts fails
// when it is not what this script would write now.
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { variables } from '../kernel/config/variables.js';

type Security = Array<Record<string, string[]>>;

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Security;
}

export interface OpenApiDocument {
  info?: { title?: string; description?: string };
  security?: Security;
  paths?: Record<string, Record<string, unknown>>;
  components?: { securitySchemes?: Record<string, { type?: string; scheme?: string; description?: string }> };
}

export interface ServerEntry {
  name: string;
  /** The document, relative to the repository root. */
  document: string;
  /** The variable naming the server's port. */
  portVariable: string;
  /** What the document alone does not say about what is served. */
  note?: string;
}

export const SERVERS: readonly ServerEntry[] = [
  {
    name: 'auth',
    document: 'api/auth/openapi.yaml',
    portVariable: 'DIDYMA_AUTH_PORT',
    note: 'The API-token operations (`…/token`, `…/token/{tokenId}`) are mounted, and part of the served document, only with `DIDYMA_EXPOSE_TOKEN_API=true`. The same server serves the web dashboard under `/dashboard`, outside the document ([dashboard.md](dashboard.md)).',
  },
  { name: 'private', document: 'api/private/openapi.yaml', portVariable: 'DIDYMA_PRIVATE_PORT' },
  { name: 'public', document: 'api/public/openapi.yaml', portVariable: 'DIDYMA_PUBLIC_PORT' },
];

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** One line of a table cell: whitespace folded, pipes escaped. */
const cell = (text: string) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

/** `none` for an explicitly open operation, alternatives joined by "or", schemes required together by "+". */
export function authOf(security: Security | undefined): string {
  if (security === undefined) return '';
  if (security.length === 0) return 'none';
  return security.map((requirement) => Object.keys(requirement).map((scheme) => `\`${scheme}\``).join(' + ') || 'none').join(' or ');
}

function portOf(name: string): string {
  const variable = Object.values(variables).find((v) => v.name === name);
  if (!variable?.default) throw new Error(`No default port in kernel/config/variables.ts for ${name}.`);
  return variable.default;
}

/** The section of one server: what it is, how it authenticates, its operations in document order. */
export function renderServer(server: ServerEntry, doc: OpenApiDocument, port: string): string {
  const lines = [`## ${server.name} server`, ''];
  if (doc.info?.description) lines.push(doc.info.description.trim().replace(/\s+/g, ' '), '');
  lines.push(`Document: [\`${server.document}\`](../${server.document}); served at \`http://localhost:${port}/openapi.json\` (\`${server.portVariable}\`), to read and try at \`http://localhost:${port}/docs\`.`, '');
  if (server.note) lines.push(server.note, '');
  const schemes = Object.entries(doc.components?.securitySchemes ?? {});
  if (schemes.length > 0) {
    lines.push('Authentication schemes:', '');
    for (const [name, scheme] of schemes) {
      const kind = scheme.type === 'http' && scheme.scheme ? `HTTP ${scheme.scheme}` : (scheme.type ?? 'unspecified');
      lines.push(`- \`${name}\` (${kind})${scheme.description ? `: ${cell(scheme.description)}` : ''}`);
    }
    lines.push('');
  }
  lines.push('| method | path | operation | auth | summary |', '|---|---|---|---|---|');
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, value] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const op = value as Operation;
      const summary = op.summary ?? op.description ?? '';
      lines.push(`| ${method.toUpperCase()} | \`${path}\` | ${op.operationId ? `\`${op.operationId}\`` : ''} | ${authOf(op.security ?? doc.security)} | ${cell(summary)} |`);
    }
  }
  return lines.join('\n');
}

/** The whole of docs/api.md. */
export function apiReference(root = new URL('../', import.meta.url)): string {
  const sections = SERVERS.map((server) => renderServer(server, parse(fs.readFileSync(new URL(server.document, root), 'utf8')) as OpenApiDocument, portOf(server.portVariable)));
  const head = [
    '# API reference',
    '',
    '<!-- Written by `npm run docs:api` (scripts/api-reference.ts) from the OpenAPI documents: edit those, then run it. -->',
    '',
    'didyma answers on three HTTP servers, each described by its own OpenAPI 3.1',
    'document. This page lists their operations; each running server serves its',
    'full document (parameters, bodies, responses, schemas) at `/openapi.json`,',
    'and that document is also what it enforces: a parameter or property it does',
    'not declare is a 400 naming the field, a path outside it a 404, another',
    'method a 405. A trailing slash makes no difference (`/o/token/` is `/o/token`).',
    '',
    'The auth column names the security schemes the document gives an operation',
    '(`none`: no credentials); what each scheme asks for is listed under its',
    'server. Roles a scheme does not capture (staff only, say) are in the summary',
    'where the document gives one. Besides the documents, every server answers',
    '`/healthz`, `/readyz` and `/metrics` ([metrics.md](metrics.md)).',
    '',
    '## Trying the API in a browser',
    '',
    'Each server also serves its document as a page at `/docs` (Swagger UI, served',
    'from the server itself: the page loads nothing from elsewhere). "Authorize"',
    'takes a bearer token (an access token from `POST /api/auth/token/obtain` or',
    'an API token `dy_…`) for each scheme the document names: give the same token',
    'to `bearerAuth` and, for a supervisor\'s operations, to `maintainerAuth`. It',
    'is kept in that browser tab only, never stored. "Try it out" then sends the',
    'request to the same server with that token and shows the answer, as curl',
    'would. Requests made there are real: they create, change and delete what the',
    'token may. The dashboard links to the pages under "Try the API" in its',
    'sidebar ([dashboard.md](dashboard.md)). The page and its files answer outside',
    'the documents, like `/healthz`; `/docs` is not an operation of any of them.',
  ].join('\n');
  return `${[head, ...sections].join('\n\n')}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  fs.writeFileSync(new URL('../docs/api.md', import.meta.url), apiReference());
}
