import type { Logger } from 'pino';
import { UnavailableError } from '../../kernel/errors/errors.js';
import { FIELD_MANAGERS, KINDS, type ResourceKind } from './constants.js';
import type { KubeConnection } from './connection.js';
import type { Desired } from './desired.js';
import { credentialsSecret, customResource, resourceRef, type KubeObject } from './resources.js';

/**
 * Writes the desired state of deployments and storage configurations to the
 * cluster: a custom resource and, when there are credentials, the Secret of
 * their version. Deterministic names and server-side apply make every call
 * idempotent, so replicas of the reconciler (platform/kube/resync.ts, its one
 * user on the platform's side) may run it at once. Secrets are only ever
 * created: the operator deletes the versions no resource names any more.
 */
export class DesiredStateWriter {
  constructor(
    private readonly kube: KubeConnection,
    private readonly logger: Logger,
  ) {}

  /**
   * The Secret goes first: the operator never sees a resource whose
   * credentials are not there yet. A resource still being finalized (the same
   * key deleted a moment ago) cannot take the new configuration: 503, retry.
   */
  async apply(desired: Desired): Promise<KubeObject> {
    const { namespace, credentialsNamespace } = this.kube;
    const api = await this.kube.api();
    const secret = credentialsSecret(desired, credentialsNamespace);
    if (secret) await api.createOnce(secret, FIELD_MANAGERS.api);
    // Forced server-side apply: the API owns spec and labels, and takes them back from anyone who edited them.
    const applied = await api.apply(customResource(desired, namespace), FIELD_MANAGERS.api);
    if (applied.metadata.deletionTimestamp) {
      throw new UnavailableError(`The previous ${KINDS[desired.kind].kind} "${desired.key}" is still being removed from the cluster; retry in a few seconds.`);
    }
    this.logger.info({ kind: KINDS[desired.kind].kind, name: applied.metadata.name, workspace: desired.workspace, key: desired.key }, 'custom resource applied');
    return applied;
  }

  /** Deletes the resource: the operator's finalizer removes its configuration and its Secrets first. */
  async removeByName(kind: ResourceKind, name: string): Promise<void> {
    const api = await this.kube.api();
    await api.delete(resourceRef(kind, this.kube.namespace, name));
    this.logger.info({ kind: KINDS[kind].kind, name }, 'custom resource deleted');
  }
}
