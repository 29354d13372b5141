import { expect } from 'chai';
import fs from 'node:fs';
import { parse } from 'yaml';

// Every error an operation documents is the one error body, by reference to
// the document's Error response (the token endpoint's OAuthError extends it).

const DOCUMENTS = ['api/auth/openapi.yaml', 'api/private/openapi.yaml', 'api/public/openapi.yaml'];
const ERROR_RESPONSES = new Set(['#/components/responses/Error', '#/components/responses/OAuthError']);

type Operation = { responses?: Record<string, { $ref?: string }> };

describe('the error responses of the OpenAPI documents', () => {
  for (const document of DOCUMENTS) {
    it(`are the Error response in ${document}`, () => {
      const doc = parse(fs.readFileSync(document, 'utf8')) as { paths: Record<string, Record<string, Operation>>; components: { responses: Record<string, { content: Record<string, { schema: { $ref?: string; allOf?: Array<{ $ref?: string }> } }> }> } };
      const elsewhere: string[] = [];
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          for (const [status, response] of Object.entries(operation.responses ?? {})) {
            if (Number(status) >= 400 && !ERROR_RESPONSES.has(response.$ref ?? '')) elsewhere.push(`${method.toUpperCase()} ${path} ${status}`);
          }
        }
      }
      expect(elsewhere).to.deep.equal([]);
      expect(doc.components.responses.Error!.content['application/json']!.schema.$ref).to.equal('#/components/schemas/Error');
      const oauth = doc.components.responses.OAuthError?.content['application/json']!.schema.allOf?.[0]?.$ref;
      if (oauth !== undefined) expect(oauth).to.equal('#/components/schemas/Error');
    });
  }
});
