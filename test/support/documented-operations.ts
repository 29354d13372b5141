import crypto from 'node:crypto';
import type { OpenApiDocument } from '../../infra/http/openapi.js';
import { operationsOf, resolve, type DocumentedOperation } from '../../infra/http/operations/document.js';
import type { Client, Reply } from './http.js';

// Every operation of the three servers, read from the documents as clients
// read them (GET /openapi.json), and a plain request for each: the tests that
// walk them fail for an operation added later without the behaviour they check.

export type ServerName = 'auth' | 'private' | 'public';

export interface ServedOperation extends DocumentedOperation {
  server: ServerName;
  client: Client;
}

export const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

export async function servedOperations(clients: Record<ServerName, Client>): Promise<ServedOperation[]> {
  const all: ServedOperation[] = [];
  for (const server of ['auth', 'private', 'public'] as const) {
    const doc = (await clients[server].get('/openapi.json')).body as OpenApiDocument;
    for (const operation of operationsOf(doc)) {
      const parameters = operation.parameters.map((p) => ({ ...p, schema: resolve<Record<string, unknown>>(doc, p.schema) }));
      all.push({ ...operation, parameters, server, client: clients[server] });
    }
  }
  return all;
}

/** The operation's path with each parameter `known` names, else a value its schema accepts. */
export function pathOf(operation: DocumentedOperation, known: Record<string, string> = {}): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_all, name: string) => {
    if (known[name] !== undefined) return encodeURIComponent(known[name]);
    const schema = operation.parameters.find((p) => p.in === 'path' && p.name === name)?.schema ?? {};
    if (schema.type === 'integer') return '1';
    if (schema.format === 'uuid') return crypto.randomUUID();
    return 'x';
  });
}

/** Sends the operation once: an empty JSON object (or form) as body when it takes one, `headers` added. */
export function sendPlain(operation: ServedOperation, options: { token?: string; headers?: Record<string, string>; known?: Record<string, string> } = {}): Promise<Reply> {
  const content = operation.requestBody?.content ?? {};
  const body = content['application/x-www-form-urlencoded'] && !content['application/json'] ? { form: {} } : operation.requestBody ? { json: {} } : {};
  return operation.client.request(operation.method.toUpperCase(), pathOf(operation, options.known), { token: options.token, headers: options.headers, ...body });
}
