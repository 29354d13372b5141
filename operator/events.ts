import type { Logger } from 'pino';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { KubeConnection } from '../infra/kube/connection.js';
import type { KubeObject } from '../infra/kube/resources.js';

export type EventType = 'Normal' | 'Warning';

const COMPONENT = 'didyma-operator';

/** Kubernetes Events about a resource (`kubectl describe mdep …`). Best effort: a lost Event never fails a reconcile. */
export class EventRecorder {
  constructor(
    private readonly kube: KubeConnection,
    private readonly identity: string,
    private readonly logger: Logger,
  ) {}

  async record(object: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const now = new Date();
    const event: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${object.metadata.name}.${Date.now().toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`, namespace: this.kube.namespace },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.metadata.name,
        namespace: object.metadata.namespace,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: COMPONENT },
      reportingComponent: `didyma.io/operator`,
      reportingInstance: this.identity.slice(0, 128),
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    try {
      await (await this.kube.api()).core.createNamespacedEvent({ namespace: this.kube.namespace, body: event });
    } catch (error) {
      this.logger.warn({ err: error, object: object.metadata.name, reason }, 'could not record an Event');
    }
  }
}
