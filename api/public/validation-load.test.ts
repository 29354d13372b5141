import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload } from '../../test/support/fixtures.js';
import { COSTLY_PER_ITEM, numbersBody } from '../../test/support/hostile-schemas.js';
import type { Reply } from '../../test/support/http.js';

// A tenant's schema that is costly against a large body: the check runs on a
// worker thread, so every server keeps answering, and past the deadline it is
// cut off and the request refused.

/** Checked 3,000 times per item against COSTLY_PER_ITEM: 0.4 s of work on an idle 2-core machine. */
const HEAVY = numbersBody(150_000);
/** Two thousand RE2 instructions, all walked for each character of LONG_STRING until its last (bench/pattern-cost.ts). */
const COSTLY_PATTERN = 'x[xy]{1000}[xy]{1000}!';
/** Pseudo-random x and y, so that RE2's DFA keeps meeting new states: matched against COSTLY_PATTERN for about 10 s on an idle machine, within the body limit. */
const LONG_STRING = JSON.stringify(`${randomXy(400_000)}!`);
/** The deadline of the checks cut off: a small body checked on a fresh thread, its schema compiled there, stays well within it on a loaded host. */
const DEADLINE_MS = 3000;

function randomXy(length: number): string {
  let seed = 1;
  return Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0x10000 ? 'x' : 'y')).join('');
}

describe('public server: a costly validation delays only its own request', function () {
  this.timeout(180_000);
  const closing: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const c of closing.reverse()) await c.close();
  });

  /** A platform with the given deadline and a model whose input and feedback schemas accept IRIS and check each array item 3,000 times; an open session with one invocation. */
  async function costlyModel(validationTimeoutMs: number) {
    const t = await startTestPlatform({ validationTimeoutMs });
    const version = unique('v');
    const demo = await startDemoModelServer(version);
    closing.push(t, demo);
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# card');
    // Objects pass at once; an array is checked 3,000 times over, then refused, so that nothing but the check costs time;
    // a string is matched against a pattern that keeps thousands of RE2 threads alive over every character.
    const schema = { anyOf: [{ type: 'object' }, { type: 'string', pattern: COSTLY_PATTERN }, { allOf: [...COSTLY_PER_ITEM.allOf, { maxItems: 2 }] }], $defs: COSTLY_PER_ITEM.$defs };
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, { input_schema: { type: 'json', schema }, feedback_schema: schema }) });
    expect(registered.status, registered.text).to.equal(201);
    const base = `/api/model/iris-classifier/version/${version}/session`;
    const session = (await t.public.post(base, { token: owner.token })).body.id as string;
    const first = await t.public.post(`${base}/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(first.status, first.text).to.equal(201);
    const invoke = (body: string) => t.public.post(`${base}/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body } } });
    const feedback = (body: string) => t.public.post(`${base}/${session}/invocation/${first.body.id}/feedback`, { token: owner.token, json: { request: { body } } });
    const rows = async () => Number((await t.platform.db('invocations').where({ session_id: session }).count({ n: '*' }))[0]!.n);
    return { t, invoke, feedback, rows };
  }

  /** The /healthz answers of each server, asked in turn until `pending` settles. */
  async function healthzWhile(t: TestPlatform, pending: Promise<Reply>) {
    let settled = false;
    void pending.finally(() => (settled = true));
    const answers = { auth: 0, private: 0, public: 0 };
    while (!settled) {
      for (const name of ['auth', 'private', 'public'] as const) {
        expect((await t[name].get('/healthz')).status).to.equal(200);
        answers[name] += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { answers, reply: await pending };
  }

  /**
   * Each server answered again and again while the check ran: a check on the
   * event loop would have held the public server's answer until it ended
   * (one round of three per check, as before the checks moved to threads).
   */
  function expectAnsweredWhileChecking(answers: Record<'auth' | 'private' | 'public', number>) {
    for (const [name, count] of Object.entries(answers)) expect(count, `${name}'s /healthz answers during the check`).to.be.at.least(4);
  }

  it('answers /healthz of the three servers again and again while an invocation and a feedback take 0.4 s or more each to validate', async () => {
    const { t, invoke, feedback, rows } = await costlyModel(60_000);
    await invoke('[]'); // starts the validation thread, under tsx slower than a request
    for (const [send, root] of [[invoke, 'request.body'], [feedback, 'feedback']] as const) {
      const { answers, reply } = await healthzWhile(t, send(HEAVY));
      expect(reply.status, reply.text.slice(0, 300)).to.equal(400);
      expect(reply.body.message).to.match(new RegExp(`^${root}: must`));
      expectAnsweredWhileChecking(answers);
    }
    expect(await rows()).to.equal(2);
  });

  it('refuses with 400 an invocation or a feedback whose validation runs past the deadline, and records nothing', async () => {
    const { invoke, feedback, rows } = await costlyModel(DEADLINE_MS);
    await invoke('[]');
    const before = await rows();
    for (const send of [invoke, feedback]) {
      const reply = await send(LONG_STRING);
      expect(reply.status, reply.text.slice(0, 300)).to.equal(400);
      expect(reply.body).to.deep.equal({ message: `request.body: validation against the model's schema took longer than ${DEADLINE_MS} ms; nothing was recorded.`, message_code: 'validation_error' });
    }
    expect(await rows()).to.equal(before);
    // Small bodies still pass, on the thread that replaced the stopped one.
    const small = await invoke('[1, 2]');
    expect(small.status, small.text).to.equal(201);
  });
});
