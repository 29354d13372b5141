import fs from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { constraintsOf, type FieldRow, fieldsOf, type FieldsDocument, inlineBodies, renderFields, renderSchema, typeOf, usedSchemas } from './api-fields.js';
import { apiReference, authOf, renderServer, SERVERS } from './api-reference.js';

describe('API reference (docs/api.md)', () => {
  it('is what `npm run docs:api` writes from the OpenAPI documents now', () => {
    const page = fs.readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    expect(page, 'docs/api.md is stale: run `npm run docs:api`').to.equal(apiReference());
  });

  it('names open operations, alternatives and combined schemes', () => {
    expect(authOf(undefined)).to.equal('');
    expect(authOf([])).to.equal('none');
    expect(authOf([{}])).to.equal('none');
    expect(authOf([{ bearerAuth: [] }, { basic: [], apiKey: [] }])).to.equal('`bearerAuth` or `basic` + `apiKey`');
  });

  it('lists operations in document order, inherits the document security and keeps each row one line', () => {
    const section = renderServer({ name: 'x', document: 'api/x/openapi.yaml', portVariable: 'X_PORT' }, {
      security: [{ bearerAuth: [] }],
      paths: {
        '/b': { parameters: [], post: { operationId: 'makeB', summary: 'Make a | b\n  thing.', security: [] } },
        '/a': { get: { description: 'Only a description.' } },
      },
    }, '9000');
    const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| method'));
    expect(rows).to.deep.equal([
      '| POST | `/b` | `makeB` | none | Make a \\| b thing. |',
      '| GET | `/a` |  | `bearerAuth` | Only a description. |',
    ]);
    expect(section).to.include('`http://localhost:9000/openapi.json`');
  });
});

/** `Schema.field` (or `operation: request body → field`) for each field the page lists that has no description. */
function undescribed(doc: FieldsDocument): string[] {
  const bare = (rows: FieldRow[]) => rows.filter((row) => !row.description?.trim()).map((row) => row.name);
  return [
    ...usedSchemas(doc).flatMap((name) => bare(fieldsOf(doc, doc.components?.schemas?.[name] ?? {})).map((field) => `${name}.${field}`)),
    ...inlineBodies(doc).flatMap((body) => bare(fieldsOf(doc, body.schema)).map((field) => `${body.title} → ${field}`)),
  ];
}

describe('API reference: fields', () => {
  const doc: FieldsDocument = {
    paths: {
      '/a': { post: { requestBody: { $ref: '#/components/requestBodies/A' }, responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } } } },
    },
    components: {
      requestBodies: { A: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Payload' } } } } },
      schemas: {
        Unused: { type: 'object', properties: { x: { type: 'string' } } },
        Thing: {
          type: 'object',
          required: ['id', 'tags'],
          properties: {
            id: { type: 'string', format: 'uuid', description: 'The thing\'s | id,\n  given by the server.' },
            state: { type: ['string', 'null'], enum: ['OPEN', 'CLOSED', null], default: 'OPEN', description: 'Its state.' },
            tags: { type: 'array', items: { $ref: '#/components/schemas/Tag' }, maxItems: 5, description: 'Its tags.' },
            owner: { type: 'object', required: ['name'], description: 'Who owns it.', properties: { name: { type: 'string', minLength: 1, maxLength: 20 } } },
          },
        },
        Tag: { type: 'string', pattern: '^[a-z]+$', description: 'A lowercase word.' },
        Payload: { type: 'object', properties: { tag: { $ref: '#/components/schemas/Tag' }, thing: { $ref: '#/components/schemas/Thing' } } },
      },
    },
  };

  it('lists the schemas the operations reach through any $ref, in document order', () => {
    expect(usedSchemas(doc)).to.deep.equal(['Thing', 'Tag', 'Payload']);
  });

  it('names types with formats, enums, nullability, array items and links to referenced schemas', () => {
    const types = fieldsOf(doc, doc.components!.schemas!.Thing!).map((row) => typeOf(row.schema, 'x'));
    expect(types).to.deep.equal([
      'string (uuid)',
      'string: one of `OPEN`, `CLOSED`, or null',
      'array of [`Tag`](#x-tag)',
      'object',
      'string',
    ]);
    expect(typeOf({ type: 'object', additionalProperties: { type: 'integer' } }, 'x')).to.equal('object of integer');
    expect(typeOf({ oneOf: [{ type: 'string' }, { const: 1 }] }, 'x')).to.equal('string or `1`');
  });

  it('mentions defaults and bounds briefly', () => {
    expect(constraintsOf({ type: 'integer', default: 1, minimum: 1, maximum: 1000 })).to.equal('(default `1`; minimum 1; maximum 1000)');
    expect(constraintsOf({ type: 'string', maxLength: 63 })).to.equal('(at most 63 characters)');
    expect(constraintsOf({ type: 'array', minItems: 1, uniqueItems: true })).to.equal('(1 to … items; no duplicates)');
    expect(constraintsOf({ type: 'string' })).to.equal('');
  });

  it('writes one line per field, nested fields dotted after their parent, required and descriptions', () => {
    const section = renderSchema(doc, 'x', 'Thing');
    expect(section).to.include('<a id="x-thing"></a>');
    const rows = section.split('\n').filter((line) => line.startsWith('| `'));
    expect(rows).to.deep.equal([
      '| `id` | string (uuid) | yes | The thing\'s \\| id, given by the server. |',
      '| `state` | string: one of `OPEN`, `CLOSED`, or null | no | Its state. (default `OPEN`) |',
      '| `tags` | array of [`Tag`](#x-tag) | yes | Its tags. (at most 5 items) |',
      '| `owner` | object | no | Who owns it. |',
      '| `owner.name` | string | yes | (1 to 20 characters) |',
    ]);
    expect(renderSchema(doc, 'x', 'Tag')).to.include('A lowercase word.\n\nType: string (pattern `^[a-z]+$`).');
  });

  it('takes the description of a scalar schema a field refers to, never that of an object', () => {
    expect(undescribed(doc)).to.deep.equal(['Thing.owner.name', 'Payload.thing']);
  });

  it('lists the bodies operations write in place, array items included, and reads a $ref into a schema as its type', () => {
    const inline: FieldsDocument = {
      paths: {
        '/q': {
          patch: {
            operationId: 'setQ',
            requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { limit: { $ref: '#/components/schemas/Q/properties/limit' } } } } } },
            responses: { 200: { content: { 'application/json': { schema: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } } } } }, 204: {} },
          },
        },
      },
      components: { schemas: { Q: { type: 'object', properties: { limit: { type: ['integer', 'null'], description: 'The limit.' } } } } },
    };
    expect(inlineBodies(inline).map((body) => body.title)).to.deep.equal(['setQ: request body', 'setQ: 200 answer, each item']);
    expect(usedSchemas(inline)).to.deep.equal(['Q']);
    const rows = renderFields(inline, 'x').split('\n').filter((line) => line.startsWith('| `'));
    expect(rows).to.include('| `limit` | integer, or null | no | The limit. |');
    expect(renderFields(inline, 'x')).to.include('#### `setQ`: 200 answer, each item');
    expect(undescribed(inline)).to.deep.equal(['setQ: 200 answer, each item → n']);
  });

  it('has a description for every field of every schema it lists', () => {
    for (const server of SERVERS) {
      const served = parse(fs.readFileSync(new URL(`../${server.document}`, import.meta.url), 'utf8')) as FieldsDocument;
      expect(undescribed(served), `fields without a description in ${server.document}`).to.deep.equal([]);
    }
  });
});
