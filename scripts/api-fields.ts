// The "Fields" part of docs/api.md: one table per schema of components.schemas
// that an operation reaches, so every field the servers accept or answer is
// explained next to the operations (scripts/api-reference.ts writes the page).

export interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  items?: Schema | boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  pattern?: string;
}

export interface FieldsDocument {
  paths?: Record<string, unknown>;
  components?: Record<string, Record<string, unknown> | undefined> & { schemas?: Record<string, Schema> };
}

/** One property of a documented schema, nested objects flattened with dotted names. */
export interface FieldRow {
  name: string;
  schema: Schema;
  required: boolean;
  description: string | undefined;
}

const SCHEMA_PREFIX = '#/components/schemas/';

/** One line of a table cell: whitespace folded, pipes escaped. */
export const cell = (text: string) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

const code = (value: unknown) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;

/** The anchor of a schema's table; the server's name keeps same-named schemas of two servers apart. */
export const anchorOf = (server: string, schema: string) => `${server}-${schema}`.toLowerCase();

function resolve(doc: FieldsDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported: ${ref}`);
  return ref.slice(2).split('/').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** The names of components.schemas the operations reach through any chain of $refs, in document order. */
export function usedSchemas(doc: FieldsDocument): string[] {
  const reached = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      if (ref.startsWith(SCHEMA_PREFIX)) reached.add(ref.slice(SCHEMA_PREFIX.length).split('/')[0]!);
      walk(resolve(doc, ref));
    }
    for (const value of Object.values(node)) walk(value);
  };
  walk(doc.paths);
  return Object.keys(doc.components?.schemas ?? {}).filter((name) => reached.has(name));
}

function typeNames(schema: Schema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** The type column: $refs as links, enums, formats, array items and nullability. */
export function typeOf(schema: Schema | boolean | undefined, server: string, doc?: FieldsDocument): string {
  if (schema === undefined || schema === true) return 'any';
  if (schema === false) return 'nothing';
  if (schema.$ref) {
    const name = schema.$ref.slice(SCHEMA_PREFIX.length);
    // A $ref into a schema's inside (`Quota/properties/max_queued`) reads as the type it points at.
    if (name.includes('/') && doc) return typeOf(resolve(doc, schema.$ref) as Schema, server, doc);
    return `[\`${name}\`](#${anchorOf(server, name)})`;
  }
  if (schema.const !== undefined) return code(schema.const);
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) return variants.map((variant) => typeOf(variant, server, doc)).join(' or ');
  if (schema.allOf) return schema.allOf.map((part) => typeOf(part, server, doc)).join(' and ');
  const names = typeNames(schema);
  const nullable = names.includes('null');
  const parts = names.filter((name) => name !== 'null').map((name) => baseType(name, schema, server, doc));
  const values = schema.enum ? `one of ${schema.enum.filter((value) => value !== null).map(code).join(', ')}` : '';
  const text = parts.length > 0 ? [parts.join(' or '), values].filter(Boolean).join(': ') : values || (schema.properties ? 'object' : 'any');
  return nullable || schema.enum?.includes(null) ? `${text}, or null` : text;
}

function baseType(name: string, schema: Schema, server: string, doc?: FieldsDocument): string {
  if (name === 'array') return `array of ${typeOf(schema.items, server, doc)}`;
  if (name === 'object' && schema.properties === undefined && typeof schema.additionalProperties === 'object') {
    return `object of ${typeOf(schema.additionalProperties, server, doc)}`;
  }
  return schema.format ? `${name} (${schema.format})` : name;
}

/** Default, bounds and pattern, briefly, for the description column. */
export function constraintsOf(schema: Schema): string {
  const notes: string[] = [];
  if (schema.default !== undefined) notes.push(`default ${code(schema.default)}`);
  if (schema.minimum !== undefined) notes.push(`minimum ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) notes.push(`more than ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined) notes.push(`maximum ${schema.maximum}`);
  if (schema.exclusiveMaximum !== undefined) notes.push(`less than ${schema.exclusiveMaximum}`);
  if (schema.minLength !== undefined) notes.push(`${schema.minLength} to ${schema.maxLength ?? '…'} characters`);
  else if (schema.maxLength !== undefined) notes.push(`at most ${schema.maxLength} characters`);
  if (schema.minItems !== undefined) notes.push(`${schema.minItems} to ${schema.maxItems ?? '…'} items`);
  else if (schema.maxItems !== undefined) notes.push(`at most ${schema.maxItems} items`);
  if (schema.uniqueItems) notes.push('no duplicates');
  if (schema.pattern !== undefined) notes.push(`pattern ${code(schema.pattern)}`);
  return notes.length > 0 ? `(${notes.join('; ')})` : '';
}

/** A property's own description, else that of the scalar schema it refers to (an object's table is a link away, not a description). */
function descriptionOf(doc: FieldsDocument, schema: Schema): string | undefined {
  if (schema.description || !schema.$ref) return schema.description;
  const target = resolve(doc, schema.$ref) as Schema | undefined;
  return target?.properties ? undefined : target?.description;
}

/** The object a property nests inline (itself, or its array's items), whose fields get rows of their own. */
function nestedObject(schema: Schema): { schema: Schema; suffix: string } | undefined {
  if (schema.properties) return { schema, suffix: '.' };
  if (typeof schema.items === 'object' && schema.items.properties) return { schema: schema.items, suffix: '[].' };
  return undefined;
}

/** Every property of an object schema, with inline nested objects' properties after their parent. */
export function fieldsOf(doc: FieldsDocument, schema: Schema, prefix = ''): FieldRow[] {
  const rows: FieldRow[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    rows.push({ name: prefix + name, schema: property, required: schema.required?.includes(name) ?? false, description: descriptionOf(doc, property) });
    const nested = nestedObject(property);
    if (nested) rows.push(...fieldsOf(doc, nested.schema, prefix + name + nested.suffix));
  }
  return rows;
}

function renderRow(doc: FieldsDocument, row: FieldRow, server: string): string {
  const about = [row.description ?? '', constraintsOf(row.schema)].filter(Boolean).join(' ');
  return `| \`${row.name}\` | ${cell(typeOf(row.schema, server, doc))} | ${row.required ? 'yes' : 'no'} | ${cell(about)} |`;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Media { content?: Record<string, { schema?: Schema }> }
interface InlineOperation { operationId?: string; requestBody?: Media; responses?: Record<string, Media> }

/** A body an operation describes in place rather than through components.schemas. */
export interface InlineBody {
  /** `createInvocation: request body`, `checkProgress: 200 answer`. */
  title: string;
  schema: Schema;
}

/** The object schemas written in place in a body (or as its array's items), operation by operation in document order. */
export function inlineBodies(doc: FieldsDocument): InlineBody[] {
  const bodies: InlineBody[] = [];
  const add = (operation: string, what: string, media: Media | undefined) => {
    for (const [type, { schema }] of Object.entries(media?.content ?? {})) {
      const object = schema?.properties ? schema : typeof schema?.items === 'object' && schema.items.properties ? schema.items : undefined;
      const each = object && object !== schema ? ', each item' : '';
      const format = Object.keys(media?.content ?? {}).length > 1 ? ` (${type})` : '';
      if (object) bodies.push({ title: `${operation}: ${what}${format}${each}`, schema: object });
    }
  };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, value] of Object.entries(item as Record<string, InlineOperation>)) {
      if (!METHODS.includes(method)) continue;
      const operation = value.operationId ?? `${method.toUpperCase()} ${path}`;
      add(operation, 'request body', value.requestBody);
      for (const [status, response] of Object.entries(value.responses ?? {})) add(operation, `${status} answer`, response);
    }
  }
  return bodies;
}

function renderInline(doc: FieldsDocument, server: string, body: InlineBody): string {
  const lines = [`#### \`${body.title.replace(/:/, '`:')}`, ''];
  if (body.schema.description) lines.push(cell(body.schema.description), '');
  lines.push(...tableOf(doc, server, fieldsOf(doc, body.schema)));
  return lines.join('\n');
}

function tableOf(doc: FieldsDocument, server: string, rows: FieldRow[]): string[] {
  return ['| field | type | required | description |', '|---|---|---|---|', ...rows.map((row) => renderRow(doc, row, server))];
}

/** One schema: its description, then its fields' table, or its type when it has no properties. */
export function renderSchema(doc: FieldsDocument, server: string, name: string): string {
  const schema = doc.components?.schemas?.[name] ?? {};
  const lines = [`<a id="${anchorOf(server, name)}"></a>`, '', `#### \`${name}\``, ''];
  if (schema.description) lines.push(cell(schema.description), '');
  const rows = fieldsOf(doc, schema);
  if (rows.length === 0) {
    lines.push(`Type: ${[typeOf(schema, server), constraintsOf(schema)].filter(Boolean).join(' ')}.`);
    return lines.join('\n');
  }
  lines.push(...tableOf(doc, server, rows));
  return lines.join('\n');
}

/** The "Fields" part of a server's section: its shared schemas, then the bodies operations write in place. */
export function renderFields(doc: FieldsDocument, server: string): string {
  const names = usedSchemas(doc);
  const bodies = inlineBodies(doc);
  if (names.length === 0 && bodies.length === 0) return '';
  const parts = [[`### ${server} server: fields`, '', 'The schemas its operations take or answer, in the order of the document, then the bodies an operation describes in place.'].join('\n')];
  parts.push(...names.map((name) => renderSchema(doc, server, name)));
  parts.push(...bodies.map((body) => renderInline(doc, server, body)));
  return parts.join('\n\n');
}
