import type { Logger } from 'pino';
import type { KubeConnection } from '../infra/kube/connection.js';
import { LABELS, MANAGED_BY, type ResourceKind } from '../infra/kube/constants.js';
import { isNotFound } from '../infra/kube/errors.js';
import type { SharedInformer } from '../infra/kube/informer-set.js';
import { resourceOfUnversionedSecret } from '../infra/kube/names.js';
import { resourceRef, secretRef, type KubeObject } from '../infra/kube/resources.js';
import type { KindHandler } from './kinds.js';

/** A kind's resources as the operator follows them, and how a resource names its Secret. */
export interface CredentialsUser {
  handler: Pick<KindHandler, 'kind' | 'secretName'>;
  resources: SharedInformer<KubeObject>;
}

export interface SecretCollectorDeps {
  /** The Secrets of the credentials namespace (the process's shared informer). */
  secrets: SharedInformer<KubeObject>;
  users: readonly CredentialsUser[];
  /** Fenced: only the leader deletes. */
  kube: KubeConnection;
  /** A Secret no resource names is kept this long: the private server creates a version before it applies the resource naming it. */
  graceMs: number;
  logger: Logger;
  now?: () => number;
}

type Spec = { spec?: unknown };

/**
 * Deletes the credentials Secrets no resource needs. The private server
 * creates a Secret per version of a resource's credentials and may not read,
 * change or delete one, so the operator, which reads them anyway, deletes the
 * versions a resource no longer names and those of resources that are gone:
 * at once for a resource it finalizes, and by a periodic sweep otherwise.
 */
export class SecretCollector {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SecretCollectorDeps) {}

  /** Sweeps once the caches are filled, then every half grace period (at least every second). */
  async start(): Promise<void> {
    await Promise.all([this.deps.secrets.whenSynced(), ...this.deps.users.map((user) => user.resources.whenSynced())]);
    const every = Math.max(1000, Math.floor(this.deps.graceMs / 2));
    this.timer = setInterval(() => this.sweepInTurn(), every);
    this.sweepInTurn();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** Deletion of a resource: every Secret of it created up to the deletion (a later one is a new resource's of the same name). */
  async release(kind: ResourceKind, name: string, deletedAt: Date): Promise<void> {
    for (const secret of this.secretsOf(kind, name)) {
      if (createdAt(secret) <= deletedAt.getTime()) await this.delete(secret, `${kind} ${name} deleted`);
    }
  }

  /** One pass: deletes every Secret past the grace period that no resource names; how many it deleted. */
  async sweep(): Promise<number> {
    const now = (this.deps.now ?? Date.now)();
    let deleted = 0;
    for (const secret of this.deps.secrets.list()) {
      const owner = ownerOf(secret);
      if (!owner || now - createdAt(secret) < this.deps.graceMs) continue;
      const user = this.deps.users.find((candidate) => candidate.handler.kind === owner.kind);
      if (!user || secretNamedBy(user, user.resources.get(owner.name)) === secret.metadata.name) continue;
      // The cache may lag: the resource is read afresh before its Secret goes.
      if ((await this.named(user, owner.name)) === secret.metadata.name) continue;
      if (await this.delete(secret, `superseded or unused for ${Math.round(this.deps.graceMs / 1000)} s`)) deleted += 1;
    }
    return deleted;
  }

  private sweepInTurn(): void {
    this.sweeping = this.sweeping
      .then(() => this.sweep())
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'the sweep of credentials Secrets failed; the next one tries again'));
  }

  /** The Secret the resource names now, read afresh, or undefined when it names none or is gone. */
  private async named(user: CredentialsUser, name: string): Promise<string | undefined> {
    try {
      return secretNamedBy(user, await (await this.deps.kube.api()).objects.read<KubeObject>(resourceRef(user.handler.kind, this.deps.kube.namespace, name)));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private secretsOf(kind: ResourceKind, name: string): KubeObject[] {
    return this.deps.secrets.list().filter((secret) => {
      const owner = ownerOf(secret);
      return owner?.kind === kind && owner.name === name;
    });
  }

  private async delete(secret: KubeObject, why: string): Promise<boolean> {
    try {
      await (await this.deps.kube.api()).objects.delete(secretRef(this.deps.kube.credentialsNamespace, secret.metadata.name));
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    this.deps.logger.info({ secret: secret.metadata.name, why }, 'credentials Secret deleted');
    return true;
  }
}

/** The Secret a resource names, or undefined when it names none, is being deleted or is not there (the cache spares the Secrets in use a read each). */
function secretNamedBy(user: CredentialsUser, resource: (KubeObject & Spec) | undefined): string | undefined {
  return resource && !resource.metadata.deletionTimestamp ? user.handler.secretName(resource.spec) : undefined;
}

const createdAt = (object: KubeObject) => new Date(object.metadata.creationTimestamp ?? 0).getTime();

/** The resource a managed credentials Secret holds the credentials of: its label, or the name it had before versions. */
function ownerOf(secret: KubeObject): { kind: ResourceKind; name: string } | undefined {
  const labels = secret.metadata.labels ?? {};
  const kind = labels[LABELS.kind];
  if (labels[LABELS.managedBy] !== MANAGED_BY || (kind !== 'deployment' && kind !== 'storage')) return undefined;
  const name = labels[LABELS.resource] ?? resourceOfUnversionedSecret(secret.metadata.name);
  return name ? { kind, name } : undefined;
}
