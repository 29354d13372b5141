import type { Db } from '../../infra/db/database.js';
import { namespaceOpenTo } from '../../infra/connectors/kserve/access.js';
import { readyRevisionOf, revisionRecordedIn, VERSION_ANNOTATION, type InferenceService } from '../../infra/connectors/kserve/inference-service.js';
import { followsRevisions, namespacesOf } from '../../infra/connectors/kserve/init.js';
import { KSERVE_REGISTRY_CLASS } from '../../infra/connectors/kserve/registry-connector.js';
import type { ConnectorInit } from '../../infra/connectors/types.js';
import type { DeploymentRow, DeploymentsStore } from '../../features/deployments/store.js';
import type { ModelRevisionsService } from '../../features/models/revisions.service.js';
import { ServicesWatchTask, syncedServices, type WatchTaskDeps } from './kserve-watch.js';

export interface RevisionFollowerDeps extends WatchTaskDeps {
  db: Db;
  deployments: Pick<DeploymentsStore, 'liveEverywhere'>;
  revisions: Pick<ModelRevisionsService, 'latest' | 'registerCopy'>;
}

type Following = DeploymentRow & { workspace_name: string };

/**
 * The one owner of `versioning: revision`: when an InferenceService of the
 * opened namespaces is ready on a predictor revision that the latest
 * registration of it through a deployment following revisions did not
 * record, registers a version named after that revision. Woken by the shared
 * informers' changes (their first list included, so a restart catches up),
 * and run every interval; every step is idempotent, so each private-server
 * replica may run it.
 */
export class KServeRevisionFollower {
  private readonly task: ServicesWatchTask;

  constructor(private readonly deps: RevisionFollowerDeps) {
    this.task = new ServicesWatchTask(deps, 'kserve_revision_follower', () => this.runOnce());
  }

  /** Watches the opened namespaces and runs a pass now, after every change, and every interval. */
  start(): void {
    this.task.start();
  }

  /** One pass over every deployment following revisions; a service that cannot be followed is logged and tried again next pass. */
  async runOnce(): Promise<void> {
    const following = (await this.deps.deployments.liveEverywhere(this.deps.db, KSERVE_REGISTRY_CLASS)).filter((row) => followsRevisions(row.registry_connector_init));
    for (const deployment of following) {
      for (const namespace of namespacesOf(deployment.registry_connector_init as ConnectorInit)) {
        if (!namespaceOpenTo(this.deps.grants, deployment.workspace_name, namespace)) continue;
        const services = await syncedServices(this.deps.informers, namespace, this.deps.logger);
        for (const service of services ?? []) await this.follow(deployment, service);
      }
    }
  }

  private async follow(deployment: Following, service: InferenceService): Promise<void> {
    const revision = readyRevisionOf(service);
    // A pinned version is the only one its registry knows.
    if (!revision || service.metadata.annotations?.[VERSION_ANNOTATION] !== undefined) return;
    const latest = await this.deps.revisions.latest(deployment.id, service.metadata.name);
    if (!latest || revisionRecordedIn(latest.native_metadata.registry) === revision) return;
    const where = { deployment: deployment.deployment_key, service: `${service.metadata.namespace}/${service.metadata.name}`, revision };
    try {
      const registered = await this.deps.revisions.registerCopy(latest, { id: deployment.workspace_id, name: deployment.workspace_name }, revision);
      if (registered) this.deps.logger.info({ ...where, from: latest.version }, 'registered the new revision as a version');
    } catch (error) {
      this.deps.logger.warn({ ...where, err: error }, 'could not register the new revision as a version; tried again next pass');
    }
  }
}
