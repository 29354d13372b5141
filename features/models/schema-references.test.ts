import { expect } from 'chai';
import { checkReferences } from './schema-references.js';
import { compileSchema, SCHEMA_LIMITS } from './json-schema.js';
import { doublingSchema, SELF_REFERENCE, TWO_CYCLE } from '../../test/support/hostile-schemas.js';

/** A schema of exactly 10,000 + `extra` subschemas once expanded: the root and 99 uses of a definition of 100 subschemas. */
function expandingTo(extra: number): object {
  const properties = (n: number, prefix: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, {}]));
  return { allOf: Array.from({ length: 99 }, () => ({ $ref: '#/$defs/leaf' })), properties: properties(extra, 'x'), $defs: { leaf: { properties: properties(99, 'p') } } };
}

describe('tenant JSON Schemas: references', () => {
  const check = (schema: object) => checkReferences(schema, 'input_schema.schema', 10_000);

  it('refuses a schema that refers to itself, naming the cycle', () => {
    expect(() => check(SELF_REFERENCE)).to.throw('input_schema.schema: its references form a cycle, # → #; a schema may not refer back to itself.');
    expect(() => compileSchema({ type: 'object', properties: { a: { $ref: '#' } } }, 'feedback_schema')).to.throw('feedback_schema: its references form a cycle, # → #;');
  });

  it('refuses a longer cycle, naming each schema on it', () => {
    expect(() => check(TWO_CYCLE)).to.throw('its references form a cycle, #/$defs/a → #/$defs/b → #/$defs/a;');
    const anchored = { $ref: '#start', $defs: { a: { $anchor: 'start', not: { $ref: '#/$defs/b' } }, b: { $ref: '#start' } } };
    expect(() => check(anchored)).to.throw('its references form a cycle, #/$defs/a → #/$defs/b → #/$defs/a;');
  });

  it('refuses recursion through nested keywords too: its expansion has no end', () => {
    const tree = { $ref: '#/$defs/node', $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } } };
    expect(() => check(tree)).to.throw('its references form a cycle, #/$defs/node → #/$defs/node;');
  });

  it('refuses a schema whose references reuse one another past the limit, however small its text', () => {
    const schema = doublingSchema(13);
    expect(JSON.stringify(schema).length).to.be.below(1024);
    expect(() => compileSchema(schema, 'input_schema.schema')).to.throw(
      `input_schema.schema: the schema expands to more than ${SCHEMA_LIMITS.expandedNodes} subschemas once each $ref is counted where it is used; at most ${SCHEMA_LIMITS.expandedNodes}.`,
    );
    // A thousand levels would be 2^1000 subschemas, which no walk could count: each is counted once.
    const started = performance.now();
    expect(() => check(doublingSchema(1000))).to.throw(/expands to more than 10000 subschemas/);
    expect(performance.now() - started).to.be.below(5000);
  });

  it('accepts a schema of exactly the limit once expanded, and refuses one more', () => {
    expect(SCHEMA_LIMITS.expandedNodes).to.equal(10_000);
    const validate = compileSchema(expandingTo(0), 'input_schema.schema');
    expect(validate({ p0: 1 })).to.equal(true);
    expect(() => compileSchema(expandingTo(1), 'input_schema.schema')).to.throw(/expands to more than 10000 subschemas/);
  });

  it('follows a long chain of references without running out of stack', () => {
    const $defs = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`d${i}`, i === 2999 ? { type: 'string' } : { $ref: `#/$defs/d${i + 1}` }]));
    expect(() => check({ $ref: '#/$defs/d0', $defs })).to.not.throw();
  });

  it('counts definitions where they are used, not where they are written, and reads values as values', () => {
    const unused = { type: 'string', $defs: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`d${i}`, doublingSchema(20)])) };
    expect(() => check(unused)).to.not.throw();
    expect(() => check({ const: { $ref: '#' }, default: { $ref: '#' }, enum: [{ $ref: '#' }] })).to.not.throw();
    expect(() => check({ properties: { $ref: { type: 'string' }, $id: { type: 'string' } } })).to.not.throw();
  });

  it('refuses what a static graph cannot follow, naming the field', () => {
    expect(() => check({ properties: { a: { $id: 'https://example.test/a', type: 'string' } } })).to.throw('input_schema.schema.properties.a.$id: a nested $id is not supported;');
    expect(() => check({ $dynamicAnchor: 'node', items: { $dynamicRef: '#node' } })).to.throw('input_schema.schema.items.$dynamicRef: not supported; use $ref.');
  });

  it('leaves references to other documents to ajv, which refuses them', () => {
    expect(() => check({ $ref: 'https://example.test/schema.json' })).to.not.throw();
    expect(() => compileSchema({ $ref: 'https://example.test/schema.json' }, 'f')).to.throw(/^f: not a valid JSON Schema/);
  });
});
