import type { OpenApiDocument } from '../openapi.js';

// Reading an OpenAPI 3.1 document: `$ref`s to its own components, and the
// operations of its paths with their parameters merged (path level, then
// operation level, the latter winning).

type Json = Record<string, unknown>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Json;
  /** `x-secret: true`: a credential (an invitation token), never written to a log line or an audit record. */
  secret: boolean;
}

export interface DocumentedOperation {
  method: string;
  /** The operation's `operationId`, the name logs and audit records give it. */
  operationId: string;
  /** The path as the document writes it: `/api/model/{modelCode}`. */
  path: string;
  parameters: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema?: Json }> };
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}

/** Follows a local `$ref` (`#/components/…`) until an object without one. */
export function resolve<T>(doc: OpenApiDocument, value: unknown): T {
  let current = value as Json;
  for (let hops = 0; typeof current?.$ref === 'string'; hops++) {
    const ref = current.$ref as string;
    if (!ref.startsWith('#/') || hops > 20) throw new Error(`OpenAPI document: unsupported or circular $ref ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Json>((node, key) => {
        const next = node?.[key];
        if (next === undefined) throw new Error(`OpenAPI document: $ref ${ref} points nowhere`);
        return next as Json;
      }, doc as Json);
  }
  return current as T;
}

export function operationsOf(doc: OpenApiDocument): DocumentedOperation[] {
  const operations: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    const pathItem = resolve<Json>(doc, item);
    const shared = parametersOf(doc, pathItem.parameters);
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method] as Json | undefined;
      if (!operation) continue;
      const own = parametersOf(doc, operation.parameters);
      const merged = new Map<string, Parameter>();
      for (const parameter of [...shared, ...own]) merged.set(`${parameter.in}:${parameter.name}`, parameter);
      operations.push({
        method,
        path,
        operationId: typeof operation.operationId === 'string' ? operation.operationId : `${method} ${path}`,
        parameters: [...merged.values()],
        requestBody: operation.requestBody ? resolve(doc, operation.requestBody) : undefined,
        responses: Object.fromEntries(Object.entries((operation.responses ?? {}) as Json).map(([status, response]) => [status, resolve(doc, response)])),
      });
    }
  }
  return operations;
}

function parametersOf(doc: OpenApiDocument, list: unknown): Parameter[] {
  if (!Array.isArray(list)) return [];
  return list.map((entry) => {
    const parameter = resolve<Json>(doc, entry);
    return { name: String(parameter.name), in: parameter.in as Parameter['in'], required: parameter.in === 'path' || parameter.required === true, schema: (parameter.schema ?? {}) as Json, secret: parameter['x-secret'] === true };
  });
}
