import type { Logger } from 'pino';
import type { KubeConnection } from '../core/kube/connection.js';
import { isConflict, isNotFound } from '../core/kube/client.js';
import { paths } from '../core/kube/paths.js';
import type { KubeObject } from '../core/kube/resources.js';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };

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

/** A Kubernetes MicroTime: microseconds, always six digits. */
const microTime = (date: Date) => date.toISOString().replace('Z', '000Z');

/**
 * May a candidate take a lease it last saw at `observedAt` (local clock)?
 * Only when it is free, already its own, or its holder has not renewed it for
 * a whole lease duration. Remote timestamps are never compared with the local
 * clock, so clock skew between replicas cannot make two leaders.
 */
export function mayAcquire(spec: LeaseSpec | undefined, identity: string, observedAt: number, now: number): boolean {
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
    const { kube, name, identity } = this.options;
    const now = new Date();
    const lease = await this.read();
    if (!lease) {
      try {
        await kube.client.create(paths.lease(kube.namespace), this.leaseObject({ holderIdentity: identity, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 }));
        return true;
      } catch (error) {
        if (isConflict(error)) return false;
        throw error;
      }
    }
    // Someone else holds it: whatever this replica believed, it is not the leader now.
    if (lease.spec?.holderIdentity && lease.spec.holderIdentity !== identity) this.renewedAt = 0;
    const record = JSON.stringify(lease.spec ?? {});
    if (record !== this.observed.record) this.observed = { record, at: Date.now() };
    if (!mayAcquire(lease.spec, identity, this.observed.at, Date.now())) return false;
    const ours = lease.spec?.holderIdentity === identity;
    const spec: LeaseSpec = {
      holderIdentity: identity,
      acquireTime: ours ? lease.spec?.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (ours ? 0 : 1),
    };
    try {
      const updated = await kube.client.replace<Lease>(paths.lease(kube.namespace, name), { ...this.leaseObject(spec), metadata: { ...lease.metadata } });
      this.observed = { record: JSON.stringify(updated.spec ?? {}), at: Date.now() };
      return true;
    } catch (error) {
      if (isConflict(error)) return false; // someone else wrote it first
      throw error;
    }
  }

  /** Hands the lease back (empty holder, 1 s): a standby acquires it on its next try. */
  private async release(): Promise<void> {
    const lease = await this.read();
    if (lease?.spec?.holderIdentity !== this.options.identity) return;
    const spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) };
    await this.options.kube.client.replace(paths.lease(this.options.kube.namespace, this.options.name), { ...lease, spec });
    this.options.logger.info({ lease: this.options.name }, 'lease released');
  }

  private async read(): Promise<Lease | undefined> {
    try {
      return await this.options.kube.client.get<Lease>(paths.lease(this.options.kube.namespace, this.options.name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private leaseObject(spec: LeaseSpec): Lease {
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
