import type { Logger } from 'pino';
import type { KubeConnection } from '../infra/kube/connection.js';
import { RestartingInformer } from '../infra/kube/informer.js';
import { paths } from '../infra/kube/paths.js';
import type { KubeObject } from '../infra/kube/resources.js';
import type { Controller } from './controller.js';
import type { KindHandler } from './kinds.js';

/** A controller and how its kind names the Secret of a resource. */
export interface SecretUser {
  controller: Controller;
  handler: Pick<KindHandler, 'secretName'>;
}

/**
 * Follows the Secrets of the credentials namespace: when one appears, changes
 * or goes, every resource whose secretRef names it is queued again, so a
 * resource that failed on a missing or wrong credential converges as soon as
 * the Secret is fixed rather than at its next retry (an invalid one has none).
 */
export class SecretWatch {
  private readonly informer: RestartingInformer<KubeObject>;

  constructor(kube: KubeConnection, users: readonly SecretUser[], logger: Logger) {
    const namespace = kube.credentialsNamespace;
    this.informer = new RestartingInformer<KubeObject>({
      informer: async () => {
        const api = await kube.api();
        return api.informer(paths.secrets(namespace), () => api.list<KubeObject>('v1', 'Secret', namespace));
      },
      onChange: (name) => {
        for (const { controller, handler } of users) controller.requeueWhere((resource) => handler.secretName(resource.spec) === name);
      },
      logger,
    });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }
}
