import { expect } from 'chai';
import { compileSchema, SCHEMA_LIMITS } from './json-schema.js';

describe('tenant JSON Schemas: no schema can stall the event loop every tenant shares', () => {
  it('matches patterns in time linear in the input, even those a backtracking engine takes exponential time on', () => {
    // With JavaScript's own RegExp each of these takes longer than the test's timeout on this input.
    for (const pattern of ['^(a+)+$', '^(a|a)*$', '^(a|aa)+$', '^([a-z]+)*[0-9]$']) {
      const validate = compileSchema({ type: 'string', pattern }, 'input_schema.schema');
      expect(validate('a'.repeat(5000) + '!'), pattern).to.equal(false);
    }
    const properties = compileSchema({ type: 'object', patternProperties: { '^(x+x+)+y$': { type: 'number' } } }, 'input_schema.schema');
    expect(properties({ ['x'.repeat(5000)]: 'not checked, no match' })).to.equal(true);
  });

  it('still validates ordinary patterns, unicode included', () => {
    const validate = compileSchema({ type: 'string', pattern: '^\\p{L}+-[0-9]{2}$' }, 'f');
    expect(validate('Ünïcode-42')).to.equal(true);
    expect(validate('x-4')).to.equal(false);
  });

  it('refuses, naming the field, a pattern whose RE2 program is past the limit, and a schema whose patterns are', () => {
    const attack = Array.from({ length: 300 }, (_, i) => `.{${1000 - i}}`).join('|');
    expect(() => compileSchema({ type: 'object', properties: { name: { type: 'string', pattern: attack } } }, 'input_schema.schema')).to.throw(
      /^input_schema\.schema\.properties\.name\.pattern: the pattern compiles to about 255\d{3} RE2 instructions .*; at most 4000\.$/,
    );
    expect(() => compileSchema({ type: 'object', patternProperties: { '(.{100}){100}': {} } }, 'feedback_schema')).to.throw(/^feedback_schema\.patternProperties\.\(\.\{100\}\)\{100\}: the pattern compiles to about/);
    // Distinct patterns together: what compiling the schema compiles.
    const many = { anyOf: Array.from({ length: 3 }, (_, i) => ({ type: 'string', pattern: `^.{${3000 + i}}$` })) };
    expect(() => compileSchema(many, 'f')).to.throw(/^f: its patterns compile to about 9\d{3} RE2 instructions together; at most 8000\.$/);
    // One pattern, applied wherever a $ref uses it.
    const reused = { allOf: Array.from({ length: 30 }, () => ({ $ref: '#/$defs/p' })), $defs: { p: { type: 'string', pattern: '^.{1000}$' } } };
    expect(() => compileSchema(reused, 'f')).to.throw(/^f: its patterns, each counted wherever the schema applies it .*, come to about 30\d{3} RE2 instructions per character checked; at most 20000\.$/);
    expect(compileSchema({ type: 'string', pattern: '^.{1,1000}$' }, 'f')('ok')).to.equal(true);
  });

  it('refuses a pattern only a backtracking engine runs, naming the field', () => {
    expect(() => compileSchema({ type: 'string', pattern: '^(?=a)a$' }, 'feedback_schema')).to.throw(/^feedback_schema: not a valid JSON Schema/);
  });

  it('refuses schemas larger or deeper than the limits, and uniqueItems without a small maxItems', () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(() => compileSchema(wide, 'f')).to.throw(`f: the schema is larger than ${SCHEMA_LIMITS.bytes} bytes.`);
    let deep: object = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'array', items: deep };
    expect(() => compileSchema(deep, 'f')).to.throw(`f: the schema is nested deeper than ${SCHEMA_LIMITS.depth} levels.`);
    expect(() => compileSchema({ type: 'object', properties: { tags: { type: 'array', uniqueItems: true, maxItems: 5000 } } }, 'f')).to.throw('f.properties.tags: uniqueItems needs maxItems of at most 1000.');
    const bounded = compileSchema({ type: 'array', uniqueItems: true, maxItems: 1000 }, 'f');
    expect(bounded([{ a: 1 }, { a: 1 }])).to.equal(false);
  });

  it('refuses fileConstraints without media types or a positive size, naming the field', () => {
    for (const constraints of [{ mediaTypes: [], maxSizeMb: 1 }, { mediaTypes: ['text/csv'] }, { mediaTypes: ['text/csv'], maxSizeMb: 0 }]) {
      expect(() => compileSchema({ type: 'object', fileConstraints: constraints }, 'feedback_schema'), JSON.stringify(constraints)).to.throw(/^feedback_schema: not a valid JSON Schema/);
    }
  });
});
