import { setTimeout as sleep } from 'node:timers/promises';
import { AuthenticationV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, HttpMethod, IsomorphicFetchHttpLibrary, KubeConfig, KubernetesObjectApi, ListWatch, PatchStrategy, ServerConfiguration, Watch, createConfiguration, setHeaderOptions, wrapHttpLibrary } from '@kubernetes/client-node';
import type { CustomObjectsApiPatchNamespacedCustomObjectStatusRequest, HttpLibrary, Informer, KubernetesListObject, KubernetesObject, ObjectCache, RequestContext, ResponseContext } from '@kubernetes/client-node';
import { parseRetryAfter } from '../net/retry.js';
import { isConflict, isNotFound } from './errors.js';

const THROTTLED_ATTEMPTS = 5;
const MAX_RETRY_AFTER_MS = 10_000;

type Selectors = { labelSelector?: string; fieldSelector?: string };
type StatusTarget = Omit<CustomObjectsApiPatchNamespacedCustomObjectStatusRequest, 'body'>;

/**
 * client-node's APIs on one cluster, every request but a watch through one
 * transport (timeout, write guard, 429 retries); only Kubernetes mode loads
 * this module (connection.ts imports it dynamically), since the library costs
 * a process about 70 MiB.
 */
export class KubeApi {
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly leases: CoordinationV1Api;
  readonly authentication: AuthenticationV1Api;

  constructor(
    readonly kc: KubeConfig,
    private readonly timeoutMs: number,
    /** Throws when this process may not write (the operator when it is not the leader). */
    guard?: () => void,
  ) {
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error('The kubeconfig names no cluster server.');
    const config = createConfiguration({ baseServer: new ServerConfiguration(server, {}), authMethods: { default: kc }, httpApi: transport(timeoutMs, guard) });
    this.objects = new KubernetesObjectApi(config);
    this.core = new CoreV1Api(config);
    this.custom = new CustomObjectsApi(config);
    this.leases = new CoordinationV1Api(config);
    this.authentication = new AuthenticationV1Api(config);
  }

  /** The same cluster, refusing every write while `guard` throws. */
  fenced(guard: () => void): KubeApi {
    return new KubeApi(this.kc, this.timeoutMs, guard);
  }

  /** Server-side apply, forced: `fieldManager` owns every field it sends. */
  apply<T extends KubernetesObject>(object: T, fieldManager: string, dryRun?: 'All'): Promise<T> {
    return this.objects.patch(object, undefined, dryRun, fieldManager, true, PatchStrategy.ServerSideApply);
  }

  /** A JSON merge patch: `patch` names the object and holds the fields to change (null removes one); the answer is the whole object. */
  mergePatch<T extends KubernetesObject>(patch: KubernetesObject & Record<string, unknown>, fieldManager?: string): Promise<T> {
    return this.objects.patch(patch as T, undefined, undefined, fieldManager, undefined, PatchStrategy.MergePatch);
  }

  /** A merge patch of a custom resource's status subresource, which KubernetesObjectApi cannot address. */
  patchStatus(target: StatusTarget, status: unknown): Promise<unknown> {
    return this.custom.patchNamespacedCustomObjectStatus({ ...target, body: { status } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  }

  /**
   * Creates the object unless one of its name is there already: how a
   * writer that may not read, patch or delete makes an object whose name
   * stands for its content (a conflict's answer carries no object).
   */
  async createOnce(object: KubernetesObject, fieldManager: string): Promise<void> {
    await this.objects.create(object, undefined, undefined, fieldManager).catch((error: unknown) => {
      if (!isConflict(error)) throw error;
    });
  }

  /** Deletes; a missing object is not an error (deleting is idempotent). */
  async delete(object: KubernetesObject): Promise<void> {
    await this.objects.delete(object).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  list<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string, { labelSelector, fieldSelector }: Selectors = {}): Promise<KubernetesListObject<T>> {
    return this.objects.list<T>(apiVersion, kind, namespace, undefined, undefined, undefined, fieldSelector, labelSelector);
  }

  /**
   * client-node's list+watch cache of the collection at `path`, listed by
   * `list` with the same selectors (ListWatch because makeInformer takes no
   * field selector). Objects are cached without their managedFields, as
   * controller-runtime's caches keep them: no reader needs them, and they are
   * the larger part of a server-side-applied object.
   */
  informer<T extends KubernetesObject>(path: string, list: () => Promise<KubernetesListObject<T>>, { labelSelector, fieldSelector }: Selectors = {}): Informer<T> & ObjectCache<T> {
    const listed = async () => {
      const answer = await list();
      answer.items.forEach(withoutManagedFields);
      return answer;
    };
    return new ListWatch(path, new LeanWatch(this.kc), listed, false, labelSelector, fieldSelector);
  }
}

/** Drops an object's managedFields in place. */
function withoutManagedFields<T extends KubernetesObject>(object: T): T {
  if (object?.metadata) delete object.metadata.managedFields;
  return object;
}

/** client-node's Watch, handing on each event's object without its managedFields. */
class LeanWatch extends Watch {
  override watch(path: string, query: Record<string, string | number | boolean | undefined>, callback: (phase: string, object: KubernetesObject, watchObject?: unknown) => void, done: (error: unknown) => void): Promise<AbortController> {
    return super.watch(path, query, (phase, object, watchObject) => callback(phase, withoutManagedFields(object), watchObject), done);
  }
}

/** The APIs of the cluster `load` puts into a fresh KubeConfig. */
export function connect(load: (kc: KubeConfig) => void, timeoutMs: number): KubeApi {
  const kc = new KubeConfig();
  load(kc);
  return new KubeApi(kc, timeoutMs);
}

/**
 * client-node's fetch transport, retrying 429s: the API server answers them to
 * requests it did not run (queues full, a resource's storage still
 * initialising) and expects the client to come back.
 */
function transport(timeoutMs: number, guard?: () => void): HttpLibrary {
  const library = new IsomorphicFetchHttpLibrary();
  return wrapHttpLibrary({
    async send(request) {
      for (let attempt = 1; ; attempt++) {
        const response = await sendOnce(library, request, timeoutMs, guard);
        if (response.httpStatusCode !== 429 || attempt >= THROTTLED_ATTEMPTS) return response;
        await response.body.text(); // frees the connection
        await sleep(retryAfterMs(response.headers['retry-after'], attempt));
      }
    },
  });
}

/** One attempt, within `timeoutMs`; the guard is asked each time, since leadership may go while a 429 is waited out. */
async function sendOnce(library: HttpLibrary, request: RequestContext, timeoutMs: number, guard?: () => void): Promise<ResponseContext> {
  if (request.getHttpMethod() !== HttpMethod.GET) guard?.();
  const signal = AbortSignal.timeout(timeoutMs);
  request.setSignal(signal);
  try {
    return await library.send(request).toPromise();
  } catch (error) {
    if (!signal.aborted) throw error;
    throw new Error(`${request.getHttpMethod()} ${new URL(request.getUrl()).pathname} timed out after ${timeoutMs} ms`);
  }
}

/** The wait before retrying a 429: its Retry-After (within 10 s), else 250 ms doubled per attempt. */
export function retryAfterMs(header: string | undefined, attempt: number): number {
  return Math.min(parseRetryAfter(header) ?? 250 * 2 ** (attempt - 1), MAX_RETRY_AFTER_MS);
}
