import type { SharedInformer } from '../infra/kube/informer-set.js';
import type { KubeObject } from '../infra/kube/resources.js';
import type { Controller } from './controller.js';
import type { KindHandler } from './kinds.js';

/** A controller and how its kind names the Secret of a resource. */
export interface SecretUser {
  controller: Controller;
  handler: Pick<KindHandler, 'secretName'>;
}

/**
 * Follows the Secrets of the credentials namespace (the process's shared
 * informer of them): when one appears, changes or goes, every resource whose
 * secretRef names it is queued again, so a resource that failed on a missing
 * or wrong credential converges as soon as the Secret is fixed rather than at
 * its next retry (an invalid one has none).
 */
export class SecretWatch {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly secrets: SharedInformer<KubeObject>,
    private readonly users: readonly SecretUser[],
  ) {}

  async start(): Promise<void> {
    await this.secrets.whenSynced();
    // Changes from now on only: each controller's start queues every resource anyway.
    this.unsubscribe = this.secrets.subscribe((name) => {
      for (const { controller, handler } of this.users) controller.requeueWhere((resource) => handler.secretName(resource.spec) === name);
    }, false);
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
  }
}
