import type { Logger } from 'pino';
import { UnavailableError } from '../errors/errors.js';
import { FIELD_MANAGERS, KINDS, type ResourceKind } from './constants.js';
import { KubeApiError } from './client.js';
import type { KubeConnection } from './connection.js';
import type { Desired } from './desired.js';
import { resourceName, secretName } from './names.js';
import { paths } from './paths.js';
import { credentialsSecret, customResource, nameOf, type KubeObject } from './resources.js';

/** Server-side apply as the API: it owns spec, labels and Secrets, and takes them back from anyone who edited them. */
export const API_APPLY = { fieldManager: FIELD_MANAGERS.api, force: true };

/**
 * Writes the desired state of deployments and storage configurations to the
 * cluster: a custom resource and, when there are credentials, its Secret.
 * Deterministic names and server-side apply make every call idempotent, so
 * the API and the resync share it.
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
    const { client, namespace } = this.kube;
    const name = nameOf(desired);
    const secret = credentialsSecret(desired, namespace);
    if (secret) await client.patch(paths.secret(namespace, secret.metadata.name), 'apply', secret, API_APPLY);
    else await client.delete(paths.secret(namespace, secretName(name)));
    const applied = await client.patch(paths.resource(desired.kind, namespace, name), 'apply', customResource(desired, namespace), API_APPLY);
    if (applied.metadata.deletionTimestamp) {
      throw new UnavailableError(`The previous ${KINDS[desired.kind].kind} "${desired.key}" is still being removed from the cluster; retry in a few seconds.`);
    }
    this.logger.info({ kind: KINDS[desired.kind].kind, name, workspace: desired.workspace, key: desired.key }, 'custom resource applied');
    return applied;
  }

  /** Deletes the resource (the operator's finalizer removes its configuration first) and its Secret. */
  async remove(kind: ResourceKind, workspace: string, key: string): Promise<void> {
    await this.removeByName(kind, resourceName(kind, workspace, key));
    this.logger.info({ kind: KINDS[kind].kind, workspace, key }, 'custom resource deleted');
  }

  async removeByName(kind: ResourceKind, name: string): Promise<void> {
    const { client, namespace } = this.kube;
    await client.delete(paths.resource(kind, namespace, name));
    await client.delete(paths.secret(namespace, secretName(name)));
  }
}

/**
 * Runs a cluster write inside the API's database transaction: any failure
 * becomes a 503 (the transaction, and so the API call, is rolled back). The
 * cause goes to the log, not to the client.
 */
export async function clusterWrite<T>(logger: Logger, what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UnavailableError) throw error;
    logger.error({ err: error, status: error instanceof KubeApiError ? error.status : undefined }, `Kubernetes write failed: ${what}`);
    throw new UnavailableError(`The Kubernetes API did not accept the ${what}; nothing was changed. Retry later.`);
  }
}
