import { expect } from 'chai';
import { InputError, UnavailableError } from '../../kernel/errors/errors.js';
import { SCHEMA_LIMITS } from '../models/json-schema.js';
import { patternInstructions } from '../models/pattern-cost.js';
import { COSTLY_PER_ITEM, numbersBody, SELF_REFERENCE } from '../../test/support/hostile-schemas.js';
import type { BodyCheck } from './body-check.js';
import { ValidationPool, ValidationQueueFullError, type ValidationPoolOptions } from './validation-pool.js';

const input = (key: string, schema: object, body: string): BodyCheck => ({ key, schema, schemaField: 'input_schema.schema', root: 'request.body', body, withFiles: false });
const options = (threads: number, timeoutMs: number, more: Partial<ValidationPoolOptions> = {}): ValidationPoolOptions => ({ threads, timeoutMs, maxWaitingPerWorkspace: 100, ...more });

describe('validation pool: tenant schemas checked off the event loop, within a deadline', () => {
  let pool: ValidationPool;
  afterEach(async () => {
    await pool?.close();
  });

  it('gives the first violation as a refusal, and the file references of a valid feedback', async () => {
    pool = new ValidationPool(options(1, 5000));
    const schema = { type: 'object', required: ['rating'], properties: { rating: { type: 'integer' } } };
    expect(await pool.check(1, input('1:input', schema, '{"rating": 4}'))).to.deep.equal({ files: [] });
    expect(await pool.check(1, input('1:input', schema, '{"rating": "4"}'))).to.deep.equal({ refused: 'request.body.rating: must be integer' });
    expect(await pool.check(1, input('1:input', schema, '{"rating": '))).to.deep.equal({ refused: 'request.body: expected JSON text.' });
    const fileConstraints = { mediaTypes: ['text/csv'], maxSizeMb: 1 };
    const feedback = { key: '1:feedback', schema: { type: 'object', properties: { evidence: { type: 'object', fileConstraints } } }, schemaField: 'feedback_schema', root: 'feedback', withFiles: true };
    const body = JSON.stringify({ evidence: { platform_file_id: 'a' }, other: [{ platform_file_id: 'b' }] });
    expect(await pool.check(1, { ...feedback, body })).to.deep.equal({
      files: [
        { path: 'feedback.evidence.platform_file_id', fileId: 'a', constraints: fileConstraints },
        { path: 'feedback.other.0.platform_file_id', fileId: 'b', constraints: undefined },
      ],
    });
  });

  it('refuses a body whose check runs past the deadline, stops its thread, and goes on checking', async () => {
    pool = new ValidationPool(options(1, 1500, { inlineBudgetNs: 0 }));
    // Four million items take seconds on any host; the deadline, counted from the check's arrival, cuts them off (its words say which ended it).
    const error = await pool.check(1, input('2:input', COSTLY_PER_ITEM, numbersBody(4_000_000))).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(InputError);
    expect((error as InputError).message).to.equal("request.body: validation against the model's schema took longer than 1500 ms; nothing was recorded.");
    // On the thread that replaced the stopped one.
    expect(await pool.check(1, input('2:small', { type: 'array' }, numbersBody(10)))).to.deep.equal({ files: [] });
    expect(pool.threads).to.equal(1);
  });

  it('checks a small body against a small schema in place, and a costly check on a thread', async () => {
    pool = new ValidationPool(options(1, 5000));
    const schema = { type: 'object', required: ['rating'], properties: { rating: { type: 'integer' } } };
    expect(await pool.check(1, input('6:input', schema, '{"rating": "4"}'))).to.deep.equal({ refused: 'request.body.rating: must be integer' });
    expect(await pool.check(1, input('6:input', schema, '{"rating": 4}'))).to.deep.equal({ files: [] });
    expect(pool.threads).to.equal(0);
    // The same schema with a long body, and a short body against a schema that expands to thousands of subschemas.
    expect(await pool.check(1, input('6:input', schema, `{"rating": 4, "note": "${'x'.repeat(20_000)}"}`))).to.deep.equal({ files: [] });
    expect(pool.threads).to.equal(1);
    expect(await pool.check(1, input('7:input', COSTLY_PER_ITEM, numbersBody(3)))).to.deep.equal({ files: [] });
  });

  it('keeps the validators of each pool its own, as keys repeat across databases', async () => {
    pool = new ValidationPool(options(1, 5000));
    const other = new ValidationPool(options(1, 5000));
    try {
      expect(await pool.check(1, input('9:input', { type: 'number' }, '1'))).to.deep.equal({ files: [] });
      expect(await other.check(1, input('9:input', { type: 'string' }, '1'))).to.deep.equal({ refused: 'request.body: must be string' });
    } finally {
      await other.close();
    }
  });

  it('checks on a thread every schema with uniqueItems, whose cost grows with the square of the body', async () => {
    pool = new ValidationPool(options(1, 5000));
    expect(await pool.check(1, input('8:input', { type: 'array', uniqueItems: true, maxItems: 10 }, '[1, 1]'))).to.deep.equal({ refused: 'request.body: must NOT have duplicate items (items ## 0 and 1 are identical)' });
    expect(pool.threads).to.equal(1);
  });

  it('counts the deadline from a check\'s arrival: one still waiting for a thread when it passes is refused', async () => {
    pool = new ValidationPool(options(1, 300, { inlineBudgetNs: 0 }));
    // Two million items: checked whole, they take seconds; the small check of another workspace waits on the one thread behind it.
    const [costly, small] = await Promise.allSettled([pool.check(1, input('3:costly', COSTLY_PER_ITEM, numbersBody(2_000_000))), pool.check(2, input('3:small', { type: 'array' }, '[1]'))]);
    expect(costly.status === 'rejected' && (costly.reason as Error).message).to.match(/took longer than 300 ms/);
    expect(small.status === 'rejected' && (small.reason as Error).message).to.match(/took longer than 300 ms/);
    pool = new ValidationPool(options(1, 30_000, { inlineBudgetNs: 0 }));
    expect(await pool.check(2, input('3:small', { type: 'array' }, '[1]'))).to.deep.equal({ files: [] });
  });

  it('hands the threads to waiting workspaces in turn, the one served longest ago first', async () => {
    pool = new ValidationPool(options(1, 60_000, { inlineBudgetNs: 0 }));
    await pool.check(9, input('10:warm', { type: 'array' }, '[]')); // the thread is started
    const done: string[] = [];
    const send = (workspace: number, name: string, items: number) => pool.check(workspace, input(`10:${name}`, COSTLY_PER_ITEM, numbersBody(items))).then(() => done.push(name));
    // Workspace 1's first check takes the thread, its next three wait; workspace 2's arrives after them all.
    const noisy = [send(1, 'a1', 20_000), send(1, 'a2', 10), send(1, 'a3', 10), send(1, 'a4', 10)];
    const quiet = send(2, 'b1', 10);
    await Promise.all([...noisy, quiet]);
    expect(done).to.deep.equal(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('keeps a thread from a workspace that floods them: another workspace’s check never waits behind its checks', async () => {
    pool = new ValidationPool(options(2, 60_000, { inlineBudgetNs: 0 }));
    await Promise.all([9, 10].map((workspace) => pool.check(workspace, input(`13:warm${workspace}`, { type: 'array' }, '[]')))); // both threads started
    const done: string[] = [];
    const send = (workspace: number, name: string, items: number) => pool.check(workspace, input(`13:${name}`, COSTLY_PER_ITEM, numbersBody(items))).then(() => done.push(name));
    // Workspace 1 sends three long checks at once, both threads free: it takes one, and its others wait for it.
    const noisy = [send(1, 'a1', 400_000), send(1, 'a2', 400_000), send(1, 'a3', 10)];
    const quiet = send(2, 'b1', 10);
    await Promise.all([...noisy, quiet]);
    expect(done[0]).to.equal('b1');
    expect(done.slice(1)).to.deep.equal(['a1', 'a2', 'a3']);
  });

  it('refuses with 429 a check past its workspace\'s waiting checks, and still takes another workspace\'s', async () => {
    pool = new ValidationPool(options(1, 60_000, { inlineBudgetNs: 0, maxWaitingPerWorkspace: 2 }));
    const costly = () => pool.check(1, input('11:costly', COSTLY_PER_ITEM, numbersBody(20_000)));
    const accepted = [costly(), costly(), costly()]; // one running, two waiting
    const refused = await costly().catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(ValidationQueueFullError);
    expect((refused as ValidationQueueFullError).status).to.equal(429);
    expect((refused as ValidationQueueFullError).headers).to.deep.equal({ 'Retry-After': '60' });
    const other = pool.check(2, input('11:other', { type: 'array' }, '[1]'));
    expect(await Promise.all([...accepted, other])).to.have.length(4);
    expect(await costly()).to.deep.equal({ files: [] });
  });

  it('never checks in place a body against the largest pattern registration accepts', async () => {
    pool = new ValidationPool(options(1, 60_000));
    // The 300 alternatives .{1000}|…|.{701} are refused at registration; the most of them that fit the limit are not.
    const alternatives = (n: number) => Array.from({ length: n }, (_, i) => `.{${1000 - i}}`).join('|');
    let n = 1;
    while (patternInstructions(alternatives(n + 1)) <= SCHEMA_LIMITS.patternInstructions) n += 1;
    const pattern = alternatives(n);
    expect(await pool.check(1, input('12:input', { type: 'string', pattern }, '"ab"'))).to.deep.equal({ refused: 'request.body: must match pattern "' + pattern + '"' });
    expect(pool.threads).to.equal(1);
  });

  it('refuses, as a 400, a stored schema that registration would refuse today', async () => {
    pool = new ValidationPool(options(1, 5000));
    expect(await pool.check(1, input('4:input', SELF_REFERENCE, '1'))).to.deep.equal({ refused: 'input_schema.schema: its references form a cycle, # → #; a schema may not refer back to itself.' });
  });

  it('compiles a schema being registered on a thread unless it is small, refusing one ajv refuses with its field', async () => {
    pool = new ValidationPool(options(1, 60_000));
    await pool.compile(1, { type: 'string', pattern: '^[a-z]{1,8}$' }, 'input_schema.schema');
    expect(pool.threads, 'a small schema is compiled in place').to.equal(0);
    await pool.compile(1, { type: 'string', pattern: '^.{1,1000}$' }, 'input_schema.schema');
    expect(pool.threads).to.equal(1);
    const error = await pool.compile(1, { type: 'string', pattern: '^(?=a)a|.{1,1000}$' }, 'explainer.feedback_schema').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(InputError);
    expect((error as InputError).message).to.match(/^explainer\.feedback_schema: not a valid JSON Schema/);
  });

  it('stops its threads on close and answers 503 afterwards', async () => {
    pool = new ValidationPool(options(2, 5000));
    await pool.check(1, input('5:input', { type: 'number' }, '1'));
    await pool.close();
    const error = await pool.check(1, input('5:input', { type: 'number' }, '1')).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(UnavailableError);
  });
});
