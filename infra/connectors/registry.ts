import { InputError } from '../../kernel/errors/errors.js';
import type { UrlPolicy } from '../net/url-policy.js';
import { MLFLOW_REGISTRY_SPEC, MlflowRegistryConnector } from './mlflow/registry-connector.js';
import { MLFLOW_PROXY_SPEC, MlflowServerProxy } from './mlflow/server-proxy.js';
import { OPEN_INFERENCE_REGISTRY_SPEC, OpenInferenceRegistryConnector } from './open-inference/registry-connector.js';
import { OPEN_INFERENCE_PROXY_SPEC, OpenInferenceServerProxy } from './open-inference/server-proxy.js';
import type { KServeAccess } from './kserve/access.js';
import { KSERVE_REGISTRY_CLASS, KServeRegistryConnector } from './kserve/registry-connector.js';
import { KSERVE_PROXY_CLASS, KServeServerProxy } from './kserve/server-proxy.js';
import type { ConnectorDeps, ConnectorInit, RegistryConnector, ServerProxy } from './types.js';

export type ConnectorKind = 'registry' | 'proxy';

interface ClassOf<K extends ConnectorKind, C> {
  readonly kind: K;
  /** Init parameters that are credentials: encrypted at rest, never shown. */
  readonly secretKeys: readonly string[];
  /** Normalized init, or an InputError naming the field (`field.key`); `workspace`, when known, is the deployment's. */
  validateInit(init: unknown, field: string, policy: UrlPolicy, workspace?: string): ConnectorInit;
  create(init: ConnectorInit, deps: ConnectorDeps): C;
}

export type RegistryConnectorClass = ClassOf<'registry', RegistryConnector>;
export type ServerProxyClass = ClassOf<'proxy', ServerProxy>;
export type ConnectorClass = RegistryConnectorClass | ServerProxyClass;

export const BUILT_IN_CONNECTOR_CLASSES: Readonly<Record<string, ConnectorClass>> = Object.freeze({
  [OPEN_INFERENCE_REGISTRY_SPEC.className]: {
    kind: 'registry',
    secretKeys: OPEN_INFERENCE_REGISTRY_SPEC.secrets,
    validateInit: OpenInferenceRegistryConnector.validateInit,
    create: (init, deps) => new OpenInferenceRegistryConnector(init, deps),
  },
  [MLFLOW_REGISTRY_SPEC.className]: {
    kind: 'registry',
    secretKeys: MLFLOW_REGISTRY_SPEC.secrets,
    validateInit: MlflowRegistryConnector.validateInit,
    create: (init, deps) => new MlflowRegistryConnector(init, deps),
  },
  [OPEN_INFERENCE_PROXY_SPEC.className]: {
    kind: 'proxy',
    secretKeys: OPEN_INFERENCE_PROXY_SPEC.secrets,
    validateInit: OpenInferenceServerProxy.validateInit,
    create: (init, deps) => new OpenInferenceServerProxy(init, deps),
  },
  [MLFLOW_PROXY_SPEC.className]: {
    kind: 'proxy',
    secretKeys: MLFLOW_PROXY_SPEC.secrets,
    validateInit: MlflowServerProxy.validateInit,
    create: (init, deps) => new MlflowServerProxy(init, deps),
  },
} satisfies Record<string, ConnectorClass>);

/** A stored deployment of a KServe class on a server outside Kubernetes mode is a configuration fault, not the caller's. */
function inKubernetesMode(access: KServeAccess | undefined, className: string): KServeAccess {
  if (!access) throw new Error(`Connector class ${className} needs Kubernetes mode (DIDYMA_KUBE_MODE) on this server`);
  return access;
}

/** The KServe classes, always known by name; without `access` (no Kubernetes mode) every init is refused, saying why. */
export function kserveConnectorClasses(access: KServeAccess | undefined): Record<string, ConnectorClass> {
  return {
    [KSERVE_REGISTRY_CLASS]: {
      kind: 'registry',
      secretKeys: [],
      validateInit: (init, field, _policy, workspace) => KServeRegistryConnector.validateInit(access, init, field, workspace),
      create: (init, deps) => new KServeRegistryConnector(inKubernetesMode(access, KSERVE_REGISTRY_CLASS), init, deps),
    },
    [KSERVE_PROXY_CLASS]: {
      kind: 'proxy',
      secretKeys: [],
      validateInit: (init, field, _policy, workspace) => KServeServerProxy.validateInit(access, init, field, workspace),
      create: (init, deps) => new KServeServerProxy(inKubernetesMode(access, KSERVE_PROXY_CLASS), init, deps),
    },
  };
}

const FIELDS: Record<ConnectorKind, { className: string; init: string; noun: string }> = {
  registry: { className: 'registry_connector_class', init: 'registry_connector_init', noun: 'registry connector' },
  proxy: { className: 'server_proxy_class', init: 'server_proxy_init', noun: 'server proxy' },
};

export interface ValidatedConnector {
  className: string;
  init: ConnectorInit;
}

export interface ConnectorCatalogOptions {
  /** Checks every URL of an init object. */
  policy: UrlPolicy;
  /** Classes the platform's operator enables in server configuration, as code: never a module named by a request. */
  extra?: Readonly<Record<string, ConnectorClass>>;
  /** The InferenceServices of the cluster, in Kubernetes mode: what the KServe classes read. */
  kserve?: KServeAccess;
}

/** The connector classes a deployment may name: a fixed map, looked up by name. */
export class ConnectorCatalog {
  private readonly classes: ReadonlyMap<string, ConnectorClass>;
  private readonly policy: UrlPolicy;

  constructor(options: ConnectorCatalogOptions) {
    const extra = options.extra ?? {};
    const builtIn = { ...BUILT_IN_CONNECTOR_CLASSES, ...kserveConnectorClasses(options.kserve) };
    const clash = Object.keys(extra).find((name) => name in builtIn);
    if (clash) throw new Error(`Connector class ${clash} is built in and cannot be replaced`);
    this.classes = new Map(Object.entries({ ...builtIn, ...extra }));
    this.policy = options.policy;
  }

  names(kind: ConnectorKind): string[] {
    return [...this.classes].filter(([, c]) => c.kind === kind).map(([name]) => name);
  }

  /** Checks a deployment's class name and init object (for `workspace`'s deployment, when given); InputErrors name the deployment field. */
  validate(kind: ConnectorKind, className: unknown, init: unknown, workspace?: string): ValidatedConnector {
    const fields = FIELDS[kind];
    const connectorClass = this.classOf(kind, className);
    return { className: className as string, init: connectorClass.validateInit(init, fields.init, this.policy, workspace) };
  }

  secretKeys(className: string): readonly string[] {
    return this.classes.get(className)?.secretKeys ?? [];
  }

  /** The init without its credentials: what a response, a CR spec or a log may carry. */
  publicInit(className: string, init: ConnectorInit): Record<string, string> {
    const secrets = this.secretKeys(className);
    return Object.fromEntries(Object.entries(init).filter(([key]) => !secrets.includes(key)));
  }

  createRegistryConnector(className: string, init: ConnectorInit, deps: ConnectorDeps): RegistryConnector {
    const connectorClass = this.enabled(className);
    if (connectorClass.kind !== 'registry') throw new Error(`Connector class ${className} is not a registry connector`);
    return connectorClass.create(init, deps);
  }

  createServerProxy(className: string, init: ConnectorInit, deps: ConnectorDeps): ServerProxy {
    const connectorClass = this.enabled(className);
    if (connectorClass.kind !== 'proxy') throw new Error(`Connector class ${className} is not a server proxy`);
    return connectorClass.create(init, deps);
  }

  private classOf(kind: ConnectorKind, className: unknown): ConnectorClass {
    const { className: field, noun } = FIELDS[kind];
    const known = this.names(kind).join(', ');
    if (typeof className !== 'string' || className === '') throw new InputError(`${field} is required; known ${noun} classes: ${known}`, [{ field, message: 'is required' }]);
    const found = this.classes.get(className);
    if (found?.kind === kind) return found;
    const shown = JSON.stringify(className.slice(0, 200));
    const problem = found ? `is not a ${noun} class` : `is not a known ${noun} class`;
    throw new InputError(`${field} ${shown} ${problem}; known ${noun} classes: ${known}`, [{ field, message: problem }]);
  }

  /** A stored deployment naming a class this server no longer enables is a configuration fault, not the caller's. */
  private enabled(className: string): ConnectorClass {
    const found = this.classes.get(className);
    if (!found) throw new Error(`Connector class ${className} is not enabled on this server`);
    return found;
  }
}
