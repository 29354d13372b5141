import fs from 'node:fs';
import { expect } from 'chai';
import { apiReference, authOf, renderServer } from './api-reference.js';

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
