import { expect } from 'chai';
import type { Db } from '../../infra/db/database.js';
import { createLogger } from '../../infra/logging/logger.js';
import type { Scheduler } from '../../infra/process/scheduler.js';
import type { ComponentStates, ServingStatesStore } from '../../features/models/serving-states.store.js';
import { fixedInformers, inferenceService } from '../../test/support/fake-informers.js';
import { KServeServingStates } from './serving-states.js';

describe('KServe serving states', () => {
  it("writes every service of each opened namespace and drops those gone, leaving a namespace it cannot list as recorded", async () => {
    const rows = new Map<string, ComponentStates>([
      ['models/gone', { predictor: { ready: true } }],
      ['closed/kept', { predictor: { ready: true } }],
    ]);
    const store: ServingStatesStore = {
      put: async (_db, namespace, name, components) => void rows.set(`${namespace}/${name}`, components),
      keepOnly: async (_db, namespace, names) => {
        for (const key of rows.keys()) if (key.startsWith(`${namespace}/`) && !names.includes(key.slice(namespace.length + 1))) rows.delete(key);
      },
      get: async () => undefined,
    };
    const states = new KServeServingStates({
      db: {} as Db,
      store,
      informers: fixedInformers({ models: [inferenceService('models', 'iris', 'iris-predictor-00002'), inferenceService('models', 'down', undefined, false)] }, ['closed']),
      grants: new Map<string, readonly string[] | '*'>([
        ['models', '*'],
        ['closed', '*'],
      ]),
      scheduler: { add: () => ({}) } as unknown as Scheduler,
      logger: createLogger('silent'),
      intervalMs: 0,
    });
    await states.runOnce();
    expect(Object.fromEntries(rows)).to.deep.equal({
      'models/iris': { predictor: { ready: true, latest_ready_revision: 'iris-predictor-00002' } },
      'models/down': { predictor: { ready: false, not_ready_reason: 'PredictorReady is False' } },
      'closed/kept': { predictor: { ready: true } },
    });
  });
});
