import { expect } from 'chai';
import { InputError, UnavailableError } from '../../kernel/errors/errors.js';
import { COSTLY_PER_ITEM, numbersBody, SELF_REFERENCE } from '../../test/support/hostile-schemas.js';
import type { BodyCheck } from './body-check.js';
import { ValidationPool } from './validation-pool.js';

const input = (key: string, schema: object, body: string): BodyCheck => ({ key, schema, schemaField: 'input_schema.schema', root: 'request.body', body, withFiles: false });

describe('validation pool: tenant schemas checked off the event loop, within a deadline', () => {
  let pool: ValidationPool;
  afterEach(async () => {
    await pool?.close();
  });

  it('gives the first violation as a refusal, and the file references of a valid feedback', async () => {
    pool = new ValidationPool({ threads: 1, timeoutMs: 5000 });
    const schema = { type: 'object', required: ['rating'], properties: { rating: { type: 'integer' } } };
    expect(await pool.check(input('1:input', schema, '{"rating": 4}'))).to.deep.equal({ files: [] });
    expect(await pool.check(input('1:input', schema, '{"rating": "4"}'))).to.deep.equal({ refused: 'request.body.rating: must be integer' });
    expect(await pool.check(input('1:input', schema, '{"rating": '))).to.deep.equal({ refused: 'request.body: expected JSON text.' });
    const fileConstraints = { mediaTypes: ['text/csv'], maxSizeMb: 1 };
    const feedback = { key: '1:feedback', schema: { type: 'object', properties: { evidence: { type: 'object', fileConstraints } } }, schemaField: 'feedback_schema', root: 'feedback', withFiles: true };
    const body = JSON.stringify({ evidence: { platform_file_id: 'a' }, other: [{ platform_file_id: 'b' }] });
    expect(await pool.check({ ...feedback, body })).to.deep.equal({
      files: [
        { path: 'feedback.evidence.platform_file_id', fileId: 'a', constraints: fileConstraints },
        { path: 'feedback.other.0.platform_file_id', fileId: 'b', constraints: undefined },
      ],
    });
  });

  it('refuses a body whose check runs past the deadline, stops its thread, and goes on checking', async () => {
    pool = new ValidationPool({ threads: 1, timeoutMs: 50 });
    const started = performance.now();
    const error = await pool.check(input('2:input', COSTLY_PER_ITEM, numbersBody(200_000))).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(InputError);
    expect((error as InputError).message).to.equal("request.body: validation against the model's schema took longer than 50 ms; nothing was recorded.");
    // The deadline starts when a thread takes the check; starting the thread under tsx takes longer than the check may.
    expect(performance.now() - started).to.be.below(5000);
    expect(await pool.check(input('2:input', { type: 'array' }, numbersBody(10)))).to.deep.equal({ files: [] });
  });

  it('checks a small body against a small schema in place, and a costly check on a thread', async () => {
    pool = new ValidationPool({ threads: 1, timeoutMs: 5000 });
    const schema = { type: 'object', required: ['rating'], properties: { rating: { type: 'integer' } } };
    expect(await pool.check(input('6:input', schema, '{"rating": "4"}'))).to.deep.equal({ refused: 'request.body.rating: must be integer' });
    expect(await pool.check(input('6:input', schema, '{"rating": 4}'))).to.deep.equal({ files: [] });
    expect(pool.threads).to.equal(0);
    // The same schema with a long body, and a short body against a schema that expands to thousands of subschemas.
    expect(await pool.check(input('6:input', schema, `{"rating": 4, "note": "${'x'.repeat(20_000)}"}`))).to.deep.equal({ files: [] });
    expect(pool.threads).to.equal(1);
    expect(await pool.check(input('7:input', COSTLY_PER_ITEM, numbersBody(3)))).to.deep.equal({ files: [] });
  });

  it('keeps the validators of each pool its own, as keys repeat across databases', async () => {
    pool = new ValidationPool({ threads: 1, timeoutMs: 5000 });
    const other = new ValidationPool({ threads: 1, timeoutMs: 5000 });
    try {
      expect(await pool.check(input('9:input', { type: 'number' }, '1'))).to.deep.equal({ files: [] });
      expect(await other.check(input('9:input', { type: 'string' }, '1'))).to.deep.equal({ refused: 'request.body: must be string' });
    } finally {
      await other.close();
    }
  });

  it('checks on a thread every schema with uniqueItems, whose cost grows with the square of the body', async () => {
    pool = new ValidationPool({ threads: 1, timeoutMs: 5000 });
    expect(await pool.check(input('8:input', { type: 'array', uniqueItems: true, maxItems: 10 }, '[1, 1]'))).to.deep.equal({ refused: 'request.body: must NOT have duplicate items (items ## 0 and 1 are identical)' });
    expect(pool.threads).to.equal(1);
  });

  it('counts only the check itself against the deadline, not the wait for a thread', async () => {
    pool = new ValidationPool({ threads: 1, timeoutMs: 300, inlineCost: 0 });
    await pool.check(input('3:small', { type: 'array' }, '[]'));
    // The small check waits on the one thread for the costly one to be cut off, longer than the deadline, then takes microseconds.
    // Two million items: checked whole, they take seconds even on a host where 200,000 take under 300 ms.
    const [costly, small] = await Promise.allSettled([pool.check(input('3:costly', COSTLY_PER_ITEM, numbersBody(2_000_000))), pool.check(input('3:small', { type: 'array' }, '[1]'))]);
    expect(costly.status === 'rejected' && (costly.reason as Error).message).to.match(/took longer than 300 ms/);
    expect(small).to.deep.equal({ status: 'fulfilled', value: { files: [] } });
  });

  it('refuses, as a 400, a stored schema that registration would refuse today', async () => {
    pool = new ValidationPool({ threads: 1, timeoutMs: 5000 });
    expect(await pool.check(input('4:input', SELF_REFERENCE, '1'))).to.deep.equal({ refused: 'input_schema.schema: its references form a cycle, # → #; a schema may not refer back to itself.' });
  });

  it('stops its threads on close and answers 503 afterwards', async () => {
    pool = new ValidationPool({ threads: 2, timeoutMs: 5000 });
    await pool.check(input('5:input', { type: 'number' }, '1'));
    await pool.close();
    const error = await pool.check(input('5:input', { type: 'number' }, '1')).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(UnavailableError);
  });
});
