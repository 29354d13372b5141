import { KINDS } from './constants.js';
import type { Connector, InitValue } from './desired.js';

// The proxy configuration: one entry per configured resource in one
// ConfigMap, written by the operator, read by executors. Credentials are
// never copied in: an entry names the Secret that holds them.

export interface SecretRef {
  name: string;
}

export interface DeploymentEntry {
  kind: 'ModelDeployment';
  workspace: string;
  key: string;
  registry: Connector;
  serverProxy: Connector;
  secretRef?: SecretRef;
}

export interface StorageEntry {
  kind: 'StorageConfig';
  workspace: string;
  key: string;
  className: string;
  init: Record<string, InitValue>;
  secretRef?: SecretRef;
}

export type ProxyConfigEntry = DeploymentEntry | StorageEntry;

/** The spec of a ModelDeployment (validated by its CRD schema). */
export interface DeploymentSpec {
  workspace: string;
  deploymentKey: string;
  registry: Connector;
  serverProxy: Connector;
  secretRef?: SecretRef;
}

/** The spec of a StorageConfig. */
export interface StorageSpec {
  workspace: string;
  storageKey: string;
  className: string;
  init: Record<string, InitValue>;
  secretRef?: SecretRef;
}

const sorted = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const connector = (c: Connector): Connector => ({ className: c.className, init: sorted(c.init ?? {}) });
const secretRefOf = (ref: SecretRef | undefined) => (ref?.name ? { secretRef: { name: ref.name } } : {});

/** The entry of a ModelDeployment: a pure function of its spec, fields in a fixed order (so equal specs give equal text). */
export function deploymentEntry(spec: DeploymentSpec): DeploymentEntry {
  return { kind: 'ModelDeployment', workspace: spec.workspace, key: spec.deploymentKey, registry: connector(spec.registry), serverProxy: connector(spec.serverProxy), ...secretRefOf(spec.secretRef) };
}

export function storageEntry(spec: StorageSpec): StorageEntry {
  return { kind: 'StorageConfig', workspace: spec.workspace, key: spec.storageKey, className: spec.className, init: sorted(spec.init ?? {}), ...secretRefOf(spec.secretRef) };
}

export const entryText = (entry: ProxyConfigEntry) => JSON.stringify(entry);

/** The entries of a ConfigMap's data; malformed ones are skipped (and named) rather than failing every lookup. */
export function parseEntries(data: Record<string, string> | undefined): { entries: Map<string, ProxyConfigEntry>; malformed: string[] } {
  const entries = new Map<string, ProxyConfigEntry>();
  const malformed: string[] = [];
  for (const [key, text] of Object.entries(data ?? {})) {
    try {
      const entry = JSON.parse(text) as ProxyConfigEntry;
      if (entry.kind !== KINDS.deployment.kind && entry.kind !== KINDS.storage.kind) throw new Error('unknown kind');
      entries.set(key, entry);
    } catch {
      malformed.push(key);
    }
  }
  return { entries, malformed };
}

