import { expect } from 'chai';
import type { Db } from '../../infra/db/database.js';
import { ownDatabase } from '../../test/support/database.js';
import { recordedServingState } from './serving-states.js';
import { servingStatesStore, type ComponentStates } from './serving-states.store.js';

describe("a KServe model's recorded serving state", function () {
  this.timeout(60_000);
  // A database of its own: the states of these tests' namespaces are the only rows.
  let db: Db;
  let drop: (() => Promise<unknown>) | undefined;
  before(async () => ({ db, drop } = await ownDatabase()));
  after(() => drop?.());

  const states: ComponentStates = { predictor: { ready: true, latest_ready_revision: 'iris-predictor-00002' }, explainer: { ready: false, not_ready_reason: 'ExplainerReady is False' } };
  const recorded = { platform: 'kserve', name: 'iris', namespace: 'models', component: 'predictor', latest_ready_revision: 'iris-predictor-00001' };

  it('keeps one row per service, changed only when its state changes, and drops services gone from the list', async () => {
    await servingStatesStore.put(db, 'models', 'iris', states);
    await servingStatesStore.put(db, 'models', 'wine', { predictor: { ready: true } });
    const written = (await db('serving_states').where({ name: 'iris' }).first()).updated_at;
    await servingStatesStore.put(db, 'models', 'iris', states);
    expect((await db('serving_states').where({ name: 'iris' }).first()).updated_at).to.deep.equal(written);
    await servingStatesStore.put(db, 'models', 'iris', { predictor: { ready: false } });
    expect(await servingStatesStore.get(db, 'models', 'iris')).to.deep.equal({ predictor: { ready: false } });
    await servingStatesStore.keepOnly(db, 'models', ['iris']);
    expect(await servingStatesStore.get(db, 'models', 'wine')).to.equal(undefined);
    await servingStatesStore.put(db, 'models', 'iris', states);
  });

  it("shows the recorded component's state, within the namespaces opened to the workspace", async () => {
    const stateOf = recordedServingState(db, servingStatesStore, new Map([['models', ['team-a']]]));
    expect(await stateOf('team-a', recorded)).to.deep.equal(states.predictor);
    expect(await stateOf('team-a', { ...recorded, component: 'explainer' })).to.deep.equal(states.explainer);
    expect(await stateOf('team-b', recorded)).to.equal(undefined);
    expect(await stateOf('team-a', { ...recorded, name: 'gone' })).to.equal(undefined);
    expect(await stateOf('team-a', { name: 'iris' })).to.equal(undefined);
  });
});
