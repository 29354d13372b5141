import { V1MicroTime, type CoordinationV1Api, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeConnection } from '../infra/kube/connection.js';
import { isConflict, isNotFound } from '../infra/kube/errors.js';

export interface LeaderCallbacks {
  onStartedLeading(): Promise<void>;
  onStoppedLeading(): Promise<void>;
}

export interface LeaderOptions {
  kube: KubeConnection;
  name: string;
  identity: string;
  leaseSeconds: number;
  logger: Logger;
}

/**
 * May a candidate take a lease it last saw at `observedAt` (local clock)?
 * Only when it is free, already its own, or its holder has not renewed it for
 * a whole lease duration. Remote timestamps are never compared with the local
 * clock, so clock skew between replicas cannot make two leaders.
 */
export function mayAcquire(spec: V1LeaseSpec | undefined, identity: string, observedAt: number, now: number): boolean {
  const holder = spec?.holderIdentity;
  if (!holder || holder === identity) return true;
  return now - observedAt >= (spec?.leaseDurationSeconds ?? 15) * 1000;
}

/**
 * Leader election through a coordination.k8s.io Lease (the client-go
 * algorithm): the leader renews every `leaseSeconds / 5`; a replica that could
 * not renew for two thirds of the lease stops acting, before anyone else may
 * take over after the full lease. `isLeader` is what every write checks.
 */
export class LeaderElector {
  private leading = false;
  private renewedAt = 0;
  private observed: { record: string; at: number } = { record: '', at: 0 };
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly options: LeaderOptions) {}

  private get leaseMs() {
    return this.options.leaseSeconds * 1000;
  }

  private get renewDeadlineMs() {
    return (this.leaseMs * 2) / 3;
  }

  private get retryMs() {
    return Math.max(200, this.leaseMs / 5);
  }

  /** True only while the lease is held and was renewed recently enough. */
  get isLeader(): boolean {
    return this.leading && Date.now() - this.renewedAt < this.renewDeadlineMs;
  }

  start(callbacks: LeaderCallbacks): void {
    this.stopped = false;
    this.loop = this.run(callbacks);
  }

  /** Stops campaigning; a leader hands the lease back so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private async run(callbacks: LeaderCallbacks): Promise<void> {
    while (!this.stopped) {
      const held = await this.tryAcquireOrRenew().catch((error: unknown) => {
        this.options.logger.warn({ err: error, lease: this.options.name }, 'lease request failed');
        return false;
      });
      if (held) this.renewedAt = Date.now();
      if (held && !this.leading) {
        this.leading = true;
        this.options.logger.info({ lease: this.options.name, identity: this.options.identity }, 'became leader');
        await callbacks.onStartedLeading();
      } else if (this.leading && !this.isLeader) {
        await this.stepDown(callbacks, 'lost the lease (could not renew in time)');
      }
      await this.sleep(this.retryMs);
    }
    if (this.leading) {
      await this.stepDown(callbacks, 'stopping');
      await this.release().catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not release the lease'));
    }
  }

  private async stepDown(callbacks: LeaderCallbacks, why: string): Promise<void> {
    this.leading = false;
    this.options.logger.warn({ lease: this.options.name, identity: this.options.identity, why }, 'stopped leading');
    await callbacks.onStoppedLeading();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { identity } = this.options;
    const now = new V1MicroTime();
    const lease = await this.read();
    if (!lease) return this.write((leases, namespace) => leases.createNamespacedLease({ namespace, body: this.leaseObject({ holderIdentity: identity, acquireTime: now, renewTime: now, leaseTransitions: 0 }) }));
    // Someone else holds it: whatever this replica believed, it is not the leader now.
    if (lease.spec?.holderIdentity && lease.spec.holderIdentity !== identity) this.renewedAt = 0;
    const record = JSON.stringify(lease.spec ?? {});
    if (record !== this.observed.record) this.observed = { record, at: Date.now() };
    if (!mayAcquire(lease.spec, identity, this.observed.at, Date.now())) return false;
    const ours = lease.spec?.holderIdentity === identity;
    const spec: V1LeaseSpec = {
      holderIdentity: identity,
      acquireTime: ours ? lease.spec?.acquireTime : now,
      renewTime: now,
      leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (ours ? 0 : 1),
    };
    // The read resourceVersion makes the write fail if someone else wrote meanwhile.
    return this.write((leases, namespace, name) => leases.replaceNamespacedLease({ name, namespace, body: { ...this.leaseObject(spec), metadata: lease.metadata } }));
  }

  /** A create or replace of the lease: true when it went through, false on a conflict (someone else wrote first). */
  private async write(call: (leases: CoordinationV1Api, namespace: string, name: string) => Promise<V1Lease>): Promise<boolean> {
    const { kube, name } = this.options;
    try {
      const written = await call((await kube.api()).leases, kube.namespace, name);
      this.observed = { record: JSON.stringify(written.spec ?? {}), at: Date.now() };
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /** Hands the lease back (empty holder, 1 s): a standby acquires it on its next try. */
  private async release(): Promise<void> {
    const lease = await this.read();
    if (lease?.spec?.holderIdentity !== this.options.identity) return;
    const spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime() };
    const { kube, name } = this.options;
    await (await kube.api()).leases.replaceNamespacedLease({ name, namespace: kube.namespace, body: { ...lease, spec } });
    this.options.logger.info({ lease: name }, 'lease released');
  }

  private async read(): Promise<V1Lease | undefined> {
    const { kube, name } = this.options;
    try {
      return await (await kube.api()).leases.readNamespacedLease({ name, namespace: kube.namespace });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private leaseObject(spec: V1LeaseSpec): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.options.name, namespace: this.options.kube.namespace },
      spec: { ...spec, leaseDurationSeconds: this.options.leaseSeconds },
    };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
