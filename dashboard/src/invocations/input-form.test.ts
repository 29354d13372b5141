import { expect } from 'chai';
import { bodyFromForm, inputFields, MAX_FORM_PROPERTIES, valuesFromBody } from './input-form.js';

describe('dashboard prediction form: fields from the input schema', () => {
  const schema = {
    type: 'json' as const,
    schema: {
      type: 'object',
      required: ['width', 'count', 'name', 'species'],
      properties: {
        width: { type: 'number', description: 'In cm', default: 1.5 },
        count: { type: 'integer' },
        name: { type: 'string' },
        wild: { type: 'boolean' },
        species: { enum: ['setosa', 'virginica', 3] },
        readings: { type: 'array', items: { type: 'number' } },
        maybe: { type: ['number', 'null'] },
        extra: { type: 'object' },
        tags: { type: 'array', items: { type: 'string' } },
      },
    },
  };

  it('makes one field per top-level property, the required ones in their order: numbers, strings, booleans, enums, lists of numbers, JSON for the rest', () => {
    const fields = inputFields(schema);
    expect(fields.map((f) => [f.name, f.kind, f.required])).to.deep.equal([
      ['width', 'number', true],
      ['count', 'integer', true],
      ['name', 'string', true],
      ['species', 'enum', true],
      ['wild', 'boolean', false],
      ['readings', 'numbers', false],
      ['maybe', 'number', false],
      ['extra', 'json', false],
      ['tags', 'json', false],
    ]);
    expect(fields[0]).to.include({ description: 'In cm', initial: '1.5' });
    expect(fields[3]!.choices).to.deep.equal(['"setosa"', '"virginica"', '3']);
  });

  it('builds the JSON body, leaving empty optional fields out', () => {
    const built = bodyFromForm(inputFields(schema), { width: ' 2.5 ', count: '3', name: 'iris', wild: 'false', species: '3', readings: '1, 2.5,-3', extra: '{"a":[1]}', tags: '', maybe: '' });
    expect(built.problems).to.deep.equal({});
    expect(JSON.parse(built.body!)).to.deep.equal({ width: 2.5, count: 3, name: 'iris', wild: false, species: 3, readings: [1, 2.5, -3], extra: { a: [1] } });
  });

  it('names each field it cannot read, and builds no body then', () => {
    const built = bodyFromForm(inputFields(schema), { width: 'wide', count: '1.5', name: '', species: '"oak"', readings: '1,,2', extra: '{', wild: 'maybe' });
    expect(built.body).to.equal(undefined);
    expect(built.problems).to.deep.equal({
      width: 'Enter a number.',
      count: 'Enter a whole number.',
      name: 'Required.',
      species: 'Choose one of the listed values.',
      readings: 'Item 2 is not a number: give numbers separated by commas.',
      extra: 'This is not valid JSON.',
      wild: 'Choose true or false.',
    });
  });

  it('fills the form in again from an earlier body', () => {
    const fields = inputFields(schema);
    const body = JSON.stringify({ width: 2.5, count: 3, name: 'iris', wild: false, species: 'setosa', readings: [1, 2], extra: { a: 1 } });
    const values = valuesFromBody(fields, body)!;
    expect(values).to.deep.include({ width: '2.5', count: '3', name: 'iris', wild: 'false', species: '"setosa"', readings: '1, 2', extra: '{"a":1}', tags: '' });
    expect(JSON.parse(bodyFromForm(fields, values).body!)).to.deep.equal(JSON.parse(body));
    expect(valuesFromBody(fields, 'not json')).to.equal(undefined);
  });

  it('asks for the whole input as JSON when the schema has no top-level object to split', () => {
    for (const input of [
      { type: 'json' as const, schema: { type: 'array', items: { type: 'number' } } },
      { type: 'json' as const },
      { type: 'file' as const },
      { type: 'json' as const, schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: MAX_FORM_PROPERTIES + 1 }, (_, i) => [`p${i}`, { type: 'number' }])) } },
    ]) {
      const fields = inputFields(input);
      expect(fields.map((f) => [f.name, f.kind])).to.deep.equal([['', 'json']]);
    }
    const fields = inputFields({ type: 'json', schema: { type: 'array' } });
    expect(bodyFromForm(fields, { '': ' [1, 2] ' })).to.deep.equal({ body: '[1, 2]', problems: {} });
    expect(bodyFromForm(fields, { '': '[1, 2' }).problems).to.deep.equal({ '': 'This is not valid JSON.' });
    expect(bodyFromForm(fields, {}).problems).to.deep.equal({ '': 'Enter the input as JSON.' });
  });
});
