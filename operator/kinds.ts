import type { ConnectorCatalog, ConnectorKind } from '../infra/connectors/registry.js';
import type { HttpClient } from '../infra/net/http-client.js';
import type { StorageClasses } from '../infra/storage/classes.js';
import type { ResourceKind } from '../infra/kube/constants.js';
import type { Connector } from '../infra/kube/desired.js';
import { deploymentEntry, storageEntry, type DeploymentSpec, type ProxyConfigEntry, type StorageSpec } from '../infra/kube/proxy-config.js';

/** Why a resource is not ready, as a condition shows it. */
export interface Problem {
  reason: string;
  message: string;
}

/** What differs per kind; the reconcile flow itself is shared (reconcile.ts). */
export interface KindHandler {
  kind: ResourceKind;
  entry(spec: unknown): ProxyConfigEntry;
  secretName(spec: unknown): string | undefined;
  /** Class names known and init valid (credentials included)? */
  validate(spec: unknown, secrets: Record<string, string>): Problem | undefined;
  /** Do the endpoints answer their health checks? */
  probe(spec: unknown, secrets: Record<string, string>): Promise<Problem | undefined>;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function deploymentHandler(catalog: ConnectorCatalog, http: HttpClient): KindHandler {
  const checkConnector = (kind: ConnectorKind, connector: Connector, secrets: Record<string, string>, workspace: string): Problem | undefined => {
    if (!catalog.names(kind).includes(connector.className)) {
      return { reason: 'InvalidClass', message: `${connector.className} is not a known ${kind === 'registry' ? 'registry connector' : 'server proxy'} class; known: ${catalog.names(kind).join(', ')}` };
    }
    try {
      catalog.validate(kind, connector.className, { ...connector.init, ...secrets }, workspace);
      return undefined;
    } catch (error) {
      return { reason: 'InvalidInit', message: messageOf(error) };
    }
  };
  return {
    kind: 'deployment',
    entry: (spec) => deploymentEntry(spec as DeploymentSpec),
    secretName: (spec) => (spec as DeploymentSpec).secretRef?.name,
    validate(spec, secrets) {
      const { registry, serverProxy, workspace } = spec as DeploymentSpec;
      return checkConnector('registry', registry, secrets, workspace) ?? checkConnector('proxy', serverProxy, secrets, workspace);
    },
    async probe(spec, secrets) {
      const { deploymentKey, registry, serverProxy, workspace } = spec as DeploymentSpec;
      const deps = { http, deploymentKey, workspace };
      const [registryResult, serverResult] = await Promise.allSettled([
        catalog.createRegistryConnector(registry.className, { ...registry.init, ...secrets }, deps).health(),
        catalog.createServerProxy(serverProxy.className, { ...serverProxy.init, ...secrets }, deps).health(),
      ]);
      const failures = [registryResult, serverResult].flatMap((result) => (result.status === 'rejected' ? [messageOf(result.reason)] : []));
      if (!failures.length) return undefined;
      return { reason: serverResult.status === 'rejected' ? 'ServerUnreachable' : 'RegistryUnreachable', message: failures.join('; ') };
    },
  };
}

export function storageHandler(classes: StorageClasses): KindHandler {
  return {
    kind: 'storage',
    entry: (spec) => storageEntry(spec as StorageSpec),
    secretName: (spec) => (spec as StorageSpec).secretRef?.name,
    validate(spec, secrets) {
      const { className, init } = spec as StorageSpec;
      if (!classes.names().includes(className)) return { reason: 'InvalidClass', message: `${className} is not a storage class enabled on this operator; known: ${classes.names().join(', ')}` };
      try {
        classes.validateInit(className, { ...init, ...secrets });
        return undefined;
      } catch (error) {
        return { reason: 'InvalidInit', message: messageOf(error) };
      }
    },
    async probe(spec, secrets) {
      const { className, init } = spec as StorageSpec;
      try {
        await classes.backend(className, { ...init, ...secrets }).check();
        return undefined;
      } catch (error) {
        return { reason: 'StorageUnreachable', message: messageOf(error) };
      }
    },
  };
}
