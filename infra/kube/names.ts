import { createHash } from 'node:crypto';
import { KINDS, LABELS, type ResourceKind } from './constants.js';

const LABEL_MAX = 63;
const DIGEST_LENGTH = 8;

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');

/** Lowercase letters, digits and single hyphens, no hyphen at either end. */
function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * The name of the custom resource of a deployment or storage configuration: a
 * DNS-1123 label (so it also fits label values and ConfigMap keys), readable
 * (`<workspace>-<key>`) and deterministic. The digest of the exact kind,
 * workspace and key keeps names distinct where the readable part collides
 * (`a-b`+`c` and `a`+`b-c`, case, truncation) and between the two kinds.
 */
export function resourceName(kind: ResourceKind, workspace: string, key: string): string {
  const hash = digest(kind, workspace, key).slice(0, DIGEST_LENGTH);
  const readable = slug(`${workspace}-${key}`)
    .slice(0, LABEL_MAX - DIGEST_LENGTH - 1)
    .replace(/-+$/, '');
  return readable ? `${readable}-${hash}` : hash;
}

/**
 * The Secret holding one version of a resource's credentials: each version
 * has a name of its own, so a Secret is created once and never changed, and
 * the private server needs no right to read, patch or delete one.
 */
export const secretName = (resource: string, version: string) => `${resource}-credentials-${version}`;

const UNVERSIONED = '-credentials';

/** The resource whose one Secret, before credentials were versioned, was named `secret`; the operator collects it like a superseded version. */
export const resourceOfUnversionedSecret = (secret: string) => (secret.endsWith(UNVERSIONED) ? secret.slice(0, -UNVERSIONED.length) : undefined);

/**
 * The ConfigMap of one workspace's proxy configuration, `<prefix>-<workspace>-<digest>`:
 * a DNS subdomain, deterministic, the digest of the exact workspace name
 * telling apart workspaces whose readable parts collide.
 */
export function proxyConfigMapName(prefix: string, workspace: string): string {
  const readable = slug(workspace).slice(0, LABEL_MAX).replace(/-+$/, '');
  const hash = digest('proxy-config', workspace).slice(0, DIGEST_LENGTH);
  return readable ? `${prefix}-${readable}-${hash}` : `${prefix}-${hash}`;
}

/** The label selector of every proxy ConfigMap of the set named `prefix`. */
export const proxyConfigSelector = (prefix: string) => `${LABELS.proxyConfig}=${proxyConfigLabel(prefix)}`;

/** The key of a resource's entry in its workspace's proxy-configuration ConfigMap. */
export const configEntryKey = (kind: ResourceKind, resource: string) => `${KINDS[kind].short}.${resource}`;

const LABEL_VALUE = /^[a-z0-9A-Z]([a-z0-9A-Z._-]{0,61}[a-z0-9A-Z])?$/;

/** `text` as a label value: itself when Kubernetes accepts it (almost always), else a stable digest. */
function labelValue(tag: string, text: string): string {
  return LABEL_VALUE.test(text) ? text : `${tag === 'workspace' ? 'ws' : tag}-${digest(tag, text).slice(0, 16)}`;
}

/** A workspace name as a label value. */
export const workspaceLabel = (workspace: string) => labelValue('workspace', workspace);

/** The value of the proxy-config label of the set named `prefix`. */
export const proxyConfigLabel = (prefix: string) => labelValue('proxy-config', prefix);
