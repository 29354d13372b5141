import { expect } from 'chai';
import type { Db } from '../../infra/db/database.js';
import { createLogger } from '../../infra/logging/logger.js';
import type { Scheduler } from '../../infra/process/scheduler.js';
import type { DeploymentRow } from '../../features/deployments/store.js';
import type { ModelRow } from '../../features/models/store.js';
import { KServeRevisionFollower } from './revision-follower.js';
import { fixedInformers, inferenceService } from '../../test/support/fake-informers.js';

const REGISTRY = 'didyma.registry.KServeRegistryConnector';

const deployment = (id: number, workspace: string, namespaces: string, versioning?: string) =>
  ({ id, workspace_id: id * 10, workspace_name: workspace, deployment_key: `dep-${id}`, registry_connector_class: REGISTRY, registry_connector_init: { namespaces, ...(versioning ? { versioning } : {}) } }) as unknown as DeploymentRow & { workspace_name: string };

const model = (code: string, version: string, revision?: string) => ({ id: 1, model_code: code, version, native_metadata: { registry: revision ? { latest_ready_revision: revision } : { name: code } } }) as unknown as ModelRow;

function follower(deployments: Array<DeploymentRow & { workspace_name: string }>, services: Parameters<typeof fixedInformers>[0], latest: Record<string, ModelRow>, refuse: string[] = []) {
  const copies: string[] = [];
  const warnings: unknown[] = [];
  const logger = createLogger('silent');
  logger.warn = ((object: unknown) => void warnings.push(object)) as typeof logger.warn;
  const scheduler = { add: () => ({ start: () => undefined, wake: () => undefined }) } as unknown as Scheduler;
  const subject = new KServeRevisionFollower({
    db: {} as Db,
    deployments: { liveEverywhere: async (_db, registryClass) => deployments.filter((d) => d.registry_connector_class === registryClass) },
    revisions: {
      latest: async (deploymentId, code) => latest[`${deploymentId}/${code}`],
      registerCopy: async (source, workspace, version) => {
        if (refuse.includes(source.model_code)) throw new Error(`no copy of ${source.model_code}`);
        copies.push(`${workspace.name}: ${source.model_code} ${source.version} -> ${version}`);
        return [];
      },
    },
    informers: fixedInformers(services),
    grants: new Map<string, readonly string[] | '*'>([
      ['models', ['team-a']],
      ['shared', '*'],
    ]),
    scheduler,
    logger,
    intervalMs: 0,
  });
  return { subject, copies, warnings };
}

describe('KServe revision follower', () => {
  it('registers the ready revision a deployment following revisions has not recorded, and nothing else', async () => {
    const { subject, copies } = follower(
      [deployment(1, 'team-a', 'models', 'revision'), deployment(2, 'team-a', 'models'), deployment(3, 'team-b', 'models', 'revision')],
      {
        models: [inferenceService('models', 'iris', 'iris-predictor-00002'), inferenceService('models', 'wine', 'wine-predictor-00003'), inferenceService('models', 'down', 'down-predictor-00002', false), inferenceService('models', 'new', 'new-predictor-00001'), inferenceService('models', 'pinned', 'pinned-predictor-00002', true, '1')],
      },
      {
        '1/iris': model('iris', '1', 'iris-predictor-00001'),
        '1/wine': model('wine', 'wine-predictor-00003', 'wine-predictor-00003'),
        '1/down': model('down', '1', 'down-predictor-00001'),
        '1/pinned': model('pinned', '1', 'pinned-predictor-00001'),
        '2/iris': model('iris', 'given', 'iris-predictor-00001'),
        '3/iris': model('iris', 'closed', 'iris-predictor-00001'),
      },
    );
    await subject.runOnce();
    // wine is at its recorded revision, down is not ready, new was never registered, pinned answers to one version, deployment 2 names its versions, team-b may not read models.
    expect(copies).to.deep.equal(['team-a: iris 1 -> iris-predictor-00002']);
  });

  it('follows a version registered before any ready revision, and goes on past a copy it cannot make', async () => {
    const { subject, copies, warnings } = follower(
      [deployment(1, 'team-b', 'shared', 'revision')],
      { shared: [inferenceService('shared', 'broken', 'broken-predictor-00002'), inferenceService('shared', 'iris', 'iris-predictor-00001')] },
      { '1/broken': model('broken', '1', 'broken-predictor-00001'), '1/iris': model('iris', 'early') },
      ['broken'],
    );
    await subject.runOnce();
    expect(copies).to.deep.equal(['team-b: iris early -> iris-predictor-00001']);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.deep.include({ deployment: 'dep-1', service: 'shared/broken', revision: 'broken-predictor-00002' });
  });
});
