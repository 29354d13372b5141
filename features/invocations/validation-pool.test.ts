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

  it('counts only the check itself against the deadline, not the wait for a thread', async () => {
    const body = numbersBody(20_000);
    // How long one check takes on this machine, once the thread is up and the schema compiled.
    const calibration = new ValidationPool({ threads: 1, timeoutMs: 60_000 });
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      const started = performance.now();
      await calibration.check(input('3:input', COSTLY_PER_ITEM, body));
      times.push(performance.now() - started);
    }
    await calibration.close();
    const one = times.slice(1).sort((a, b) => a - b)[1]!;
    const timeoutMs = Math.round(Math.max(1000, 4 * one));
    pool = new ValidationPool({ threads: 1, timeoutMs });
    await pool.check(input('3:input', COSTLY_PER_ITEM, '[]'));
    // Queued on one thread, the last checks wait about twice the deadline, which each check is well within.
    const queued = Math.ceil((2 * timeoutMs) / one);
    const verdicts = await Promise.all(Array.from({ length: queued }, () => pool.check(input('3:input', COSTLY_PER_ITEM, body))));
    expect(verdicts).to.deep.equal(Array.from({ length: queued }, () => ({ files: [] })));
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
