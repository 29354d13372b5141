import type { Logger } from 'pino';
import type { KubeConnection } from './connection.js';
import { RestartingInformer, type ListWatch } from './informer.js';
import { collectionKey, type Collection } from './paths.js';
import type { KubeObject } from './resources.js';

/** A change of the cached set, by name: the object, or undefined once it is gone. */
export type ChangeHandler<T extends KubeObject> = (name: string, object: T | undefined) => void;

/** Builds the client-node informer of a collection (the connection's by default; a test's fake API in unit tests). */
export type InformerFactory = <T extends KubeObject>(collection: Collection) => Promise<ListWatch<T>>;

/**
 * One list+watch of a collection, shared by every user in the process, as
 * client-go's shared informers are: users subscribe and unsubscribe, the
 * InformerSet that made it starts it (on the first wait for its cache) and
 * stops it.
 */
export class SharedInformer<T extends KubeObject> {
  private readonly handlers = new Set<ChangeHandler<T>>();
  private readonly informer: RestartingInformer<T>;
  private starting: Promise<void> | undefined;

  constructor(
    readonly collection: Collection,
    build: () => Promise<ListWatch<T>>,
    logger: Logger,
  ) {
    this.informer = new RestartingInformer<T>({
      informer: build,
      onChange: (name, object) => {
        for (const handler of this.handlers) handler(name, object);
      },
      logger,
    });
  }

  get hasSynced(): boolean {
    return this.informer.hasSynced;
  }

  list(): readonly T[] {
    return this.informer.list();
  }

  get(name: string): T | undefined {
    return this.informer.get(name, this.collection.namespace);
  }

  /**
   * Adds a handler, by default told at once about every object already
   * cached (as client-go tells a handler added late): a user that comes after
   * the first list misses nothing. Returns what removes it.
   */
  subscribe(handler: ChangeHandler<T>, replay = true): () => void {
    this.handlers.add(handler);
    if (replay) for (const object of this.informer.list()) handler(object.metadata.name, object);
    return () => this.handlers.delete(handler);
  }

  /**
   * Starts the list+watch on the first call (one start however many users
   * ask) and resolves once synced; a failed first list rejects every waiter
   * and lets the next call try again.
   */
  whenSynced(): Promise<void> {
    this.starting ??= this.informer.start().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  /** The InformerSet's: no user stops a watch others share. */
  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    this.starting = undefined;
    await this.informer.stop();
  }
}

/**
 * The shared informers of one process, like client-go's
 * SharedInformerFactory: one per collection (type, namespace, selectors),
 * however many users ask for it. Made by the process's wiring, which stops
 * them all when the process closes.
 */
export class InformerSet {
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();

  constructor(
    private readonly logger: Logger,
    private readonly build: InformerFactory,
  ) {}

  /** Informers of the cluster of `kube`, listing with the same selectors as they watch. */
  static of(kube: KubeConnection, logger: Logger): InformerSet {
    return new InformerSet(logger, async <T extends KubeObject>(c: Collection) => {
      const api = await kube.api();
      const selectors = { labelSelector: c.labelSelector, fieldSelector: c.fieldSelector };
      return api.informer<T>(c.path, () => api.list<T>(c.apiVersion, c.kind, c.namespace, selectors), selectors);
    });
  }

  /** The informer of `collection`, made on the first ask. */
  informer<T extends KubeObject>(collection: Collection): SharedInformer<T> {
    const key = collectionKey(collection);
    let informer = this.informers.get(key);
    if (!informer) {
      const logger = this.logger.child({ watch: collection.path, labelSelector: collection.labelSelector });
      informer = new SharedInformer<KubeObject>(collection, () => this.build<KubeObject>(collection), logger);
      this.informers.set(key, informer);
    }
    return informer as unknown as SharedInformer<T>;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
  }
}
