import { expect } from 'chai';
import fs from 'node:fs';
import type { Request, Response } from 'express';
import { parse } from 'yaml';
import { responseAjv } from './operations/ajv.js';
import { errorHandler } from './errors.js';
import { createLogger } from '../logging/logger.js';
import { InputError, NotFoundError, RateLimitedError } from '../../kernel/errors/errors.js';
import { UpstreamError } from '../connectors/errors.js';
import { fieldError } from '../storage/init-fields.js';
import { notEnabledError } from '../storage/filesystem-class.js';

// Every error body, whoever throws it, has the one shape the three documents
// define as `Error`: `{message, message_code, details?}`, `details` always a
// list of `{field?, message}`.

const DOCUMENTS = ['api/auth/openapi.yaml', 'api/private/openapi.yaml', 'api/public/openapi.yaml'];

/** The errors the services throw, each with the details it carries: made, or thrown by the code that throws it. */
const thrown: Record<string, () => unknown> = {
  'a validation error with details': () => new InputError('name: too long.', [{ field: 'name', message: 'too long' }]),
  'a validation error without details': () => new InputError('The request body is required.'),
  'a storage field': () => fieldError('connector_init.bucket', 'connector_init.bucket must be a string'),
  'a storage class not enabled': () => notEnabledError(),
  'an upstream failure': () => new UpstreamError('dep-1', 'the model server at http://10.0.0.1 failed', true),
  'not found': () => new NotFoundError(),
  'rate limited': () => new RateLimitedError(30),
  'an unexpected failure': () => new Error('boom'),
};

/** What the error middleware answers for what a producer throws. */
function answerTo(produce: () => unknown): { status: number; body: unknown } {
  let error: unknown = new Error('the producer did not throw');
  try {
    const made = produce();
    if (made instanceof Error) error = made;
  } catch (caught) {
    error = caught;
  }
  const answer = { status: 0, body: undefined as unknown };
  const res = {
    headersSent: false,
    setHeader: () => res,
    status: (status: number) => ((answer.status = status), res),
    json: (body: unknown) => ((answer.body = body), res),
  };
  errorHandler(createLogger('silent'))(error, { path: '/' } as Request, res as unknown as Response, () => undefined);
  return answer;
}

describe('the error body', () => {
  for (const document of DOCUMENTS) {
    it(`has one shape, the Error schema of ${document}`, () => {
      const doc = parse(fs.readFileSync(document, 'utf8')) as { components: { schemas: Record<string, object> } };
      const validate = responseAjv().addSchema(doc, 'doc').getSchema('doc#/components/schemas/Error')!;
      for (const [name, produce] of Object.entries(thrown)) {
        const answer = answerTo(produce);
        expect(answer.status, name).to.be.at.least(400);
        expect(validate(answer.body), `${name}: ${JSON.stringify(answer.body)} ${JSON.stringify(validate.errors)}`).to.equal(true);
      }
    });
  }

  it('refuses details in any other shape', () => {
    const doc = parse(fs.readFileSync(DOCUMENTS[0]!, 'utf8')) as object;
    const validate = responseAjv().addSchema(doc, 'doc').getSchema('doc#/components/schemas/Error')!;
    expect(validate({ message: 'm', message_code: 'c', details: { field: 'password', problems: ['short'] } })).to.equal(false);
    expect(validate({ message: 'm', message_code: 'c', details: [{ field: 'f', max: 10 }] })).to.equal(false);
    expect(validate({ message: 'm', message_code: 'c', details: [{ field: 'f', message: 'bad' }] })).to.equal(true);
  });
});
