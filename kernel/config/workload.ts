// Workload identity: the issuers whose JWTs, and the Kubernetes ServiceAccounts
// whose tokens, /o/token exchanges for didyma access tokens (docs/workload-identity.md).
// Validated here once, so a wrong mapping stops the start instead of refusing a workload later.

export type WorkloadRole = 'user' | 'supervisor';

export interface WorkloadGrant {
  workspace: string;
  role: WorkloadRole;
}

/** A claim value of an issuer's tokens, and the workspace and role it grants. */
export interface ClaimGrant extends WorkloadGrant {
  value: string;
}

export interface WorkloadIssuer {
  /** The `iss` of its tokens, exactly. */
  issuer: string;
  /** The `aud` its tokens must carry (one of them). */
  audience: string;
  /** Where its keys are; absent: read from its discovery document. */
  jwksUri: string | undefined;
  /** Asymmetric algorithms only: a token signed otherwise (`none`, HS256…) is refused. */
  algorithms: string[];
  /** The claim whose value the grants name (`sub`, `azp`, `client_id`…). */
  claim: string;
  grants: ClaimGrant[];
}

/** A ServiceAccount of a namespace, and the workspace and role it grants. */
export interface ServiceAccountGrant extends WorkloadGrant {
  namespace: string;
  serviceAccount: string;
}

export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

const ISSUER_KEYS = new Set(['issuer', 'audience', 'jwks_uri', 'algorithms', 'claim', 'mappings']);
const ACCOUNT_KEYS = new Set(['namespace', 'service_account', 'workspace', 'role']);
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

type Json = Record<string, unknown>;

/** Parses DIDYMA_WORKLOAD_ISSUERS: a JSON array of issuers (empty: none). */
export function parseWorkloadIssuers(raw: string): WorkloadIssuer[] {
  const issuers = entries(raw, 'issuer', issuerOf);
  const names = issuers.map((i) => i.issuer);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice) throw new Error(`issuer "${twice}" is listed twice`);
  return issuers;
}

/** Parses DIDYMA_WORKLOAD_SERVICE_ACCOUNTS: a JSON array of `{namespace, service_account, workspace, role}` (empty: none). */
export function parseServiceAccountGrants(raw: string): ServiceAccountGrant[] {
  return entries(raw, 'service account', (json) => {
    known(json, ACCOUNT_KEYS);
    const namespace = text(json, 'namespace');
    if (!DNS_LABEL.test(namespace)) throw new Error('namespace: expected a namespace name');
    const serviceAccount = text(json, 'service_account');
    if (!DNS_SUBDOMAIN.test(serviceAccount)) throw new Error('service_account: expected a ServiceAccount name');
    return { namespace, serviceAccount, ...grantOf(json) };
  });
}

function entries<T>(raw: string, what: string, parse: (json: Json) => T): T[] {
  if (raw.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`expected a JSON array of ${what} objects`);
  }
  if (!Array.isArray(value)) throw new Error(`expected a JSON array of ${what} objects`);
  return value.map((entry, index) => {
    try {
      if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new Error('expected an object');
      return parse(entry as Json);
    } catch (error) {
      throw new Error(`${what} ${index}: ${(error as Error).message}`);
    }
  });
}

function issuerOf(json: Json): WorkloadIssuer {
  known(json, ISSUER_KEYS);
  const algorithms = json.algorithms === undefined ? ASYMMETRIC_ALGORITHMS : texts(json, 'algorithms');
  const symmetric = algorithms.find((alg) => !ASYMMETRIC_ALGORITHMS.includes(alg));
  if (symmetric) throw new Error(`algorithms: "${symmetric}" is not one of ${ASYMMETRIC_ALGORITHMS.join(', ')}`);
  if (!Array.isArray(json.mappings)) throw new Error('mappings: expected an array of {value, workspace, role}');
  return {
    issuer: urlOf(text(json, 'issuer'), 'issuer'),
    audience: text(json, 'audience'),
    jwksUri: json.jwks_uri === undefined ? undefined : urlOf(text(json, 'jwks_uri'), 'jwks_uri'),
    algorithms,
    claim: json.claim === undefined ? 'sub' : text(json, 'claim'),
    grants: json.mappings.map((item: unknown, index) => {
      if (!item || typeof item !== 'object') throw new Error(`mappings[${index}]: expected {value, workspace, role}`);
      return { value: text(item as Json, 'value'), ...grantOf(item as Json) };
    }),
  };
}

function grantOf(json: Json): WorkloadGrant {
  const role = json.role ?? 'user';
  if (role !== 'user' && role !== 'supervisor') throw new Error('role: expected user or supervisor');
  return { workspace: text(json, 'workspace'), role };
}

/** https, or http on a loopback host (an issuer on the same machine, as in the tests). */
function urlOf(raw: string, key: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${key}: expected a URL`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new Error(`${key}: expected an https URL (http only on a loopback host)`);
  return raw;
}

function known(json: Json, keys: Set<string>): void {
  const unknown = Object.keys(json).filter((key) => !keys.has(key));
  if (unknown.length) throw new Error(`unknown field(s) ${unknown.join(', ')}`);
}

function text(json: Json, key: string): string {
  const value = json[key];
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`${key}: expected a non-empty string`);
  return value;
}

function texts(json: Json, key: string): string[] {
  const value = json[key];
  if (!Array.isArray(value) || value.length === 0 || value.some((item) => typeof item !== 'string')) throw new Error(`${key}: expected a non-empty array of strings`);
  return value as string[];
}
