import { expect } from 'chai';
import { queuedPredict, startIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { unique } from '../../test/support/platform.js';
import { invocationState } from './state.js';
import { invocationsStore, type InvocationRow } from './store.js';

describe('session context of need_context models: the latest N invocations within a byte budget', () => {
  let iris: IrisSession;
  let rows: InvocationRow[]; // predictions 0..5, with a feedback between 2 and 3
  let sizes: number[];

  before(async () => {
    const version = unique('v');
    iris = await startIrisSession(version);
    const { t, owner, modelId, sessionId } = iris;
    const to = { workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId };
    rows = [];
    for (let i = 0; i < 6; i++) {
      const [row] = await invocationState.appendQueued(t.platform.db, [queuedPredict(to, `request ${i} ${'x'.repeat(100 * i)}`)]);
      await t.platform.db('invocations').where({ id: row!.id }).update({ status: 'COMPLETED', response: `response ${i}` });
      rows.push({ ...row!, response: `response ${i}` });
      if (i === 2) {
        const path = `/api/model/iris-classifier/version/${version}/session/${sessionId}/invocation/${row!.id}/feedback`;
        const feedback = await t.public.post(path, { token: owner.token, json: { request: { body: '{"correct":true}' } } });
        expect(feedback.status, feedback.text).to.equal(201);
      }
    }
    sizes = rows.map((row) => Buffer.byteLength(row.body) + Buffer.byteLength(row.response));
  });
  after(() => iris.close());

  const contextOf = (row: InvocationRow, window: { maxInvocations: number; maxBytes: number }) =>
    invocationsStore.contextBefore(iris.t.platform.db, row, window).then((entries) => entries.map((entry) => entry.response));

  it('gives the latest N earlier predictions and explanations, oldest first, feedback aside', async () => {
    expect(await contextOf(rows[5]!, { maxInvocations: 3, maxBytes: 1 << 20 })).to.deep.equal(['response 2', 'response 3', 'response 4']);
    expect(await contextOf(rows[2]!, { maxInvocations: 3, maxBytes: 1 << 20 })).to.deep.equal(['response 0', 'response 1']);
    expect(await contextOf(rows[0]!, { maxInvocations: 3, maxBytes: 1 << 20 })).to.deep.equal([]);
  });

  it('leaves out the older invocations that would go over the byte budget', async () => {
    const latestTwo = sizes[4]! + sizes[3]!;
    expect(await contextOf(rows[5]!, { maxInvocations: 10, maxBytes: latestTwo })).to.deep.equal(['response 3', 'response 4']);
    expect(await contextOf(rows[5]!, { maxInvocations: 10, maxBytes: latestTwo - 1 })).to.deep.equal(['response 4']);
    expect(await contextOf(rows[5]!, { maxInvocations: 10, maxBytes: sizes[4]! - 1 }), 'one larger than the budget by itself').to.deep.equal([]);
  });
});
