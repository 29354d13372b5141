import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import type { OpenApiDocument } from '../openapi.js';
import { operationsOf, type DocumentedOperation, type Parameter } from './document.js';
import { compileRequest } from './ajv.js';

// Every operation of a document compiled once, at start-up: one validator for
// its path parameters, one for its query, one per request media type and one
// per JSON response. A request then costs a table lookup and the validators.

/** Bodies of these media types are streamed by their handler: only the media type is checked here. */
const STREAMED = new Set(['multipart/form-data']);

export interface RequestBodyRules {
  required: boolean;
  /** Media type → the body's validator, or `streamed`. */
  byMediaType: ReadonlyMap<string, ValidateFunction | 'streamed'>;
}

export interface CompiledOperation {
  method: string;
  path: string;
  operationId: string;
  /** Names of the parameters marked `x-secret`: never a log's or an audit record's to show. */
  secrets: ReadonlySet<string>;
  pathParameters?: ValidateFunction;
  query: { validate?: ValidateFunction; known: ReadonlySet<string> };
  /** The declared headers, by their declared names (`Idempotency-Key`); other headers are not checked. */
  headers?: { validate: ValidateFunction; names: readonly string[] };
  body?: RequestBodyRules;
  /** Status (`200`, `4XX`, `default`) → the JSON body's validator, or null when the response is not JSON. */
  responses: ReadonlyMap<string, ValidateFunction | null>;
}

export interface Engines {
  request: Ajv2020;
  /** Absent: responses are not checked (production). */
  response?: Ajv2020;
}

export function compileOperations(doc: OpenApiDocument, engines: Engines): CompiledOperation[] {
  const withComponents = (schema: object) => ({ ...schema, components: doc.components });
  const objectOf = (parameters: Parameter[]) => {
    if (parameters.length === 0) return undefined;
    const properties = Object.fromEntries(parameters.map((p) => [p.name, p.schema]));
    const required = parameters.filter((p) => p.required).map((p) => p.name);
    return compileRequest(engines.request, withComponents({ type: 'object', properties, required }));
  };
  return operationsOf(doc).map((operation) => {
    const unsupported = operation.parameters.find((p) => p.in === 'cookie');
    if (unsupported) throw new Error(`OpenAPI ${operation.method.toUpperCase()} ${operation.path}: ${unsupported.in} parameters are not supported`);
    const query = operation.parameters.filter((p) => p.in === 'query');
    const headers = operation.parameters.filter((p) => p.in === 'header');
    const validateHeaders = objectOf(headers);
    return {
      method: operation.method,
      path: operation.path,
      operationId: operation.operationId,
      secrets: new Set(operation.parameters.filter((p) => p.secret).map((p) => p.name)),
      pathParameters: objectOf(operation.parameters.filter((p) => p.in === 'path')),
      query: { validate: objectOf(query), known: new Set(query.map((p) => p.name)) },
      headers: validateHeaders && { validate: validateHeaders, names: headers.map((p) => p.name) },
      body: bodyRules(operation, (schema) => compileRequest(engines.request, withComponents(schema))),
      responses: engines.response ? responseRules(operation, (schema) => engines.response!.compile(withComponents(schema))) : new Map(),
    };
  });
}

function bodyRules(operation: DocumentedOperation, compile: (schema: object) => ValidateFunction): RequestBodyRules | undefined {
  if (!operation.requestBody) return undefined;
  const byMediaType = new Map<string, ValidateFunction | 'streamed'>();
  for (const [mediaType, content] of Object.entries(operation.requestBody.content ?? {})) {
    const type = mediaType.toLowerCase();
    byMediaType.set(type, STREAMED.has(type) ? 'streamed' : compile(content.schema ?? {}));
  }
  return { required: operation.requestBody.required === true, byMediaType };
}

function responseRules(operation: DocumentedOperation, compile: (schema: object) => ValidateFunction): Map<string, ValidateFunction | null> {
  const rules = new Map<string, ValidateFunction | null>();
  for (const [status, response] of Object.entries(operation.responses)) {
    const json = response.content?.['application/json'];
    rules.set(status.toUpperCase(), json ? compile(json.schema ?? {}) : null);
  }
  return rules;
}
