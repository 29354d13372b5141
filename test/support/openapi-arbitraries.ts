import fc from 'fast-check';

// Requests generated from an OpenAPI document: values its schemas accept, and
// the values a hostile client sends instead (wrong types, huge strings, NUL
// bytes, odd unicode, deep nesting, bodies that are not what the header says).

type Json = any;

/** `$ref`s followed through the document, so a generator sees the schema itself. */
export function resolve(doc: Json, node: Json, seen = 0): Json {
  if (node && typeof node === 'object' && typeof node.$ref === 'string' && seen < 20) {
    const target = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((at: Json, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return resolve(doc, target, seen + 1);
  }
  return node;
}

/** Text a client should never get a 5xx for: traversal, injection, NUL, bidi and zero-width characters, numbers out of range. */
export const hostileStrings = fc.constantFrom(
  '',
  ' ',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  'a/b',
  'ﬁle',
  'e\u0301',
  '\u202eexe.txt',
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  'zero\u200bwidth',
  '\ufeffbom',
  '😀',
  'ＡＢＣ',
  "'; drop table users; --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'x'.repeat(300),
  'x'.repeat(4000),
  '-1',
  '0',
  '2147483648',
  '9223372036854775808',
  '1e309',
  'NaN',
  'Infinity',
  'true',
  'null',
  '[]',
  '{}',
  '00000000-0000-0000-0000-000000000000',
  '1970-01-01',
  '9999-12-31T23:59:59Z',
);

/** Nested arrays and objects deeper than any limit a server should hold in memory. */
const deeplyNested = fc.integer({ min: 50, max: 3000 }).map((depth) => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
});

/** Multipart bodies for the boundary `X` that no parser should choke on: traversal and NUL in names, no terminator, no headers, huge headers, many parts. */
export const MULTIPART_BOUNDARY = 'X';
const part = (headers: string, content = 'abc') => `--X\r\n${headers}\r\n\r\n${content}\r\n`;
const brokenMultipart = fc.constantFrom(
  `${part('Content-Disposition: form-data; name="file"; filename="../../etc/passwd\u0000.png"\r\nContent-Type: image/png')}--X--\r\n`,
  `${part('Content-Disposition: form-data; name="file"; filename="a.txt"')}`.slice(0, -2),
  `--X\r\n\r\nabc\r\n--X--\r\n`,
  `${part(`Content-Disposition: form-data; name="${'n'.repeat(100_000)}"`)}--X--\r\n`,
  `${part('Content-Disposition: form-data; name="file"; filename="a"')}${part('Content-Disposition: form-data; name="file"; filename="b"')}--X--\r\n`,
  `${part('Content-Disposition: form-data; name="logo"; filename="l.png"\r\nContent-Type: image/png', '\x89PNG\r\n')}--X--\r\n`,
  `${part('Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%E2%80%AEexe.txt')}--X--\r\n`,
  `${part('Content-Disposition: form-data; name="x"').repeat(2000)}--X--\r\n`,
  '--X--\r\n',
  '--Y\r\n\r\n--Y--',
);

/** A value of any type where the schema asks for one: what a client mixing up fields sends. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileStrings,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constant('y'.repeat(70_000)),
  fc.integer(),
  fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, 0.5),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'a', ''), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
  deeplyNested,
);

export interface ParamValue {
  /** Use the tenant's real identifier when the parameter names one. */
  known: boolean;
  value: string;
}

/** A path, query or header parameter: the tenant's real identifier, a schema-valid value, or something hostile. */
export function paramArbitrary(doc: Json, param: Json): fc.Arbitrary<ParamValue | undefined> {
  const schema = resolve(doc, param.schema ?? {});
  const valid = valueArbitrary(doc, schema, 0).map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? ''));
  const value = fc.oneof(
    { weight: 4, arbitrary: valid },
    { weight: 2, arbitrary: hostileStrings },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  );
  const present = fc.record({ known: fc.boolean(), value });
  return param.required ? present : fc.option(present, { nil: undefined, freq: 3 });
}

/** A request body: schema-valid, valid but for one hostile field, another JSON value, deep nesting, or bytes that are not JSON. */
export function bodyArbitrary(doc: Json, op: Json): fc.Arbitrary<unknown> {
  const content = op.requestBody?.content;
  if (!content) return fc.constant(undefined);
  const media = content['application/json'] ?? content['application/x-www-form-urlencoded'] ?? content['multipart/form-data'] ?? Object.values(content)[0];
  const schema = resolve(doc, media?.schema ?? {});
  const valid = valueArbitrary(doc, schema, 0);
  const oneFieldWrong = fc.tuple(valid, fc.nat(), hostileValue).map(([value, index, wrong]) => withOneField(doc, schema, value, index, wrong));
  const invalid = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    deeplyNested,
    fc.record({ raw: fc.oneof(fc.constantFrom('{', '{"a":', '[1,2', 'null', '"text"', '\u0000', '{"a":1}{"b":2}', '\ufeff{}', '['.repeat(20_000)), fc.string({ unit: 'binary', maxLength: 64 }), brokenMultipart) }),
    fc.record({ raw: fc.constant('z'.repeat(300 * 1024)) }),
  );
  return fc.oneof({ weight: 4, arbitrary: valid }, { weight: 3, arbitrary: oneFieldWrong }, { weight: 2, arbitrary: invalid }, { weight: 1, arbitrary: fc.constant(undefined) });
}

/** The valid value with one of the schema's properties (or an unknown one) set to `wrong`. */
function withOneField(doc: Json, schema: Json, value: unknown, index: number, wrong: unknown): unknown {
  const names = Object.keys(resolve(doc, schema)?.properties ?? {});
  if (!value || typeof value !== 'object' || Array.isArray(value)) return wrong;
  const name = names.length ? (names[index % (names.length + 1)] ?? 'unexpected_field') : 'unexpected_field';
  return { ...(value as object), [name]: wrong };
}

/** Values of a JSON Schema (the subset the documents use), small and bounded in depth. */
export function valueArbitrary(doc: Json, input: Json, depth: number): fc.Arbitrary<unknown> {
  const schema = resolve(doc, input ?? {});
  if (!schema || typeof schema !== 'object' || depth > 4) return fc.jsonValue({ maxDepth: 1 });
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[key])) return fc.oneof(...schema[key].map((s: Json) => valueArbitrary(doc, s, depth + 1)));
  }
  if (Array.isArray(schema.allOf)) return valueArbitrary(doc, Object.assign({}, ...schema.allOf.map((s: Json) => resolve(doc, s))), depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueArbitrary(doc, schema.items ?? {}, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object':
    case undefined: {
      const properties = Object.entries<Json>(schema.properties ?? {});
      if (!properties.length) return type === 'object' ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }) : fc.jsonValue({ maxDepth: 2 });
      const required: string[] = schema.required ?? [];
      return fc.record(Object.fromEntries(properties.map(([name, s]) => [name, valueArbitrary(doc, s, depth + 1)])), { requiredKeys: required.filter((r) => properties.some(([n]) => n === r)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

function stringArbitrary(schema: Json): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress();
    case 'date':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'binary':
      return fc.string({ maxLength: 64 });
  }
  if (typeof schema.pattern === 'string') {
    const min = schema.minLength ?? 0;
    const max = Math.max(min, schema.maxLength ?? 40);
    // One character class repeated: its lengths are generated, as a filter would almost never see a long enough match and spin.
    const repeated = /^\^(\[[^\]]+\])\+\$$/.exec(schema.pattern);
    if (repeated) return fc.stringMatching(new RegExp(`^${repeated[1]}{${Math.max(min, 1)},${max}}$`));
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= max && s.length >= min);
  }
  return fc.string({ unit: 'grapheme', minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
}

/** The Content-Type a request claims: the documented one mostly, else one the operation does not take. */
export function contentTypeArbitrary(op: Json): fc.Arbitrary<string> {
  const declared = Object.keys(op.requestBody?.content ?? { 'application/json': {} });
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...declared) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/json; charset=utf-16',
        'application/json; charset=latin-9000',
        'application/xml',
        'application/vnd.api+json',
        'multipart/form-data',
        'multipart/form-data; boundary=',
        `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`,
        `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`,
        'application/x-www-form-urlencoded',
        '*/*',
        'application/json;charset=',
        'ÿ/ÿ',
      ),
    },
  );
}

/** A Content-Encoding: none mostly; a real gzip; or one that lies about the bytes, or is unknown. */
export const encodingArbitrary = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br') },
  { weight: 1, arbitrary: fc.constantFrom('corrupt-gzip', 'corrupt-deflate', 'corrupt-br', 'x-unknown', 'gzip, gzip', 'identity') },
);

/** A query parameter no operation declares, sometimes with a hostile name. */
export const unknownQueryArbitrary: fc.Arbitrary<[string, string] | undefined> = fc.oneof(
  { weight: 9, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('debug', '__proto__', 'limit[]', 'a'.repeat(200)), fc.string({ unit: 'binary', minLength: 1, maxLength: 10 })), hostileStrings) },
);

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Authorization headers no server issued: garbage, other schemes, unsigned and malformed JWTs, unknown API tokens. */
export const forgeryArbitrary = fc.constantFrom(
  'Bearer not-a-token',
  'Bearer ',
  'Bearer',
  'Basic dXNlcjpwYXNz',
  'bearer dy_' + 'A'.repeat(43),
  'Bearer dy_',
  `Bearer ${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ user_id: 1, token_type: 'access', workspace: null, exp: 4102444800 })}.`,
  `Bearer ${base64url({ alg: 'HS256', typ: 'JWT', kid: '../../etc/passwd' })}.${base64url({ user_id: 'x' })}.c2ln`,
  `Bearer ${base64url({ alg: 'EdDSA', kid: 'nope' })}.e30.AAAA`,
  'Bearer a.b.c',
  'Bearer ' + 'x'.repeat(8000),
  'Bearer \u00ff\u00fe',
  'Bearer tok, Bearer tok2',
);

/** A path segment sent without encoding it again: broken, NUL, overlong or slash percent-escapes. */
export const rawSegmentArbitrary: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%2F', '%C0%AE', '%FF', '%u0041', '%25', 'a%2Fb', '%F0%9F%98') },
);
