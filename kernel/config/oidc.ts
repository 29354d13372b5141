import fs from 'node:fs';

// The OpenID Providers people may sign in with (DIDYMA_OIDC_CONNECTIONS), as
// JSON: validated here once, so a wrong connection stops the start instead of
// failing someone's sign-in later.

export type OidcRole = 'user' | 'supervisor';

/** A client secret: readable by the code that sends it, printed as a placeholder anywhere else. */
export class ClientSecret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toJSON(): string {
    return '[redacted]';
  }
  toString(): string {
    return '[redacted]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[redacted]';
  }
}

/** Where a connection's client secret is read from at start. */
export type SecretSource = { env: string } | { file: string } | undefined;

export interface WorkspaceGrant {
  group: string;
  workspace: string;
  role: OidcRole;
}

export interface OidcConnection {
  /** In the dashboard's URLs: lowercase letters, digits and hyphens. */
  id: string;
  displayName: string;
  /** The issuer exactly as the provider's discovery document states it. */
  issuer: string;
  clientId: string;
  /** Absent for a public client. Filled from `secretSource` by loadConfig. */
  clientSecret: ClientSecret | undefined;
  secretSource: SecretSource;
  scopes: string[];
  /** The path to the groups in the ID token's claims (`groups`, `realm_access.roles`). */
  groupsClaim: string[];
  workspaceGrants: WorkspaceGrant[];
  staffGroups: string[];
  /** Lower-case domains the e-mail must end in (after `@`); empty: any. */
  allowedDomains: string[];
  /** Create a didyma user at the first sign-in (just in time). */
  createUsers: boolean;
  /** Refuse a sign-in that no mapping grants anything. */
  requireMappedGroup: boolean;
}

const ID = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
const DOMAIN = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
const KEYS = new Set([
  'id', 'display_name', 'issuer', 'client_id', 'client_secret_env', 'client_secret_file', 'scopes', 'groups_claim',
  'workspace_roles', 'staff_groups', 'allowed_email_domains', 'create_users', 'require_mapped_group',
]);

type Json = Record<string, unknown>;

/** Parses DIDYMA_OIDC_CONNECTIONS: a JSON array of connections (empty: no single sign-on). */
export function parseOidcConnections(raw: string): OidcConnection[] {
  if (raw.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error('expected a JSON array of connections');
  }
  if (!Array.isArray(value)) throw new Error('expected a JSON array of connections');
  const connections = value.map((entry, index) => {
    try {
      return connectionOf(entry);
    } catch (error) {
      throw new Error(`connection ${index}: ${(error as Error).message}`);
    }
  });
  const ids = connections.map((c) => c.id);
  const twice = ids.find((id, index) => ids.indexOf(id) !== index);
  if (twice) throw new Error(`connection id "${twice}" is used twice`);
  return connections;
}

function connectionOf(entry: unknown): OidcConnection {
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new Error('expected an object');
  const json = entry as Json;
  const unknown = Object.keys(json).filter((key) => !KEYS.has(key));
  if (unknown.length) throw new Error(`unknown field(s) ${unknown.join(', ')}`);
  const id = text(json, 'id');
  if (!ID.test(id)) throw new Error('id: expected at most 40 lowercase letters, digits and hyphens');
  const scopes = texts(json, 'scopes', ['openid', 'email', 'profile']);
  if (!scopes.includes('openid')) throw new Error('scopes: must include openid');
  return {
    id,
    displayName: optionalText(json, 'display_name') ?? id,
    issuer: issuerOf(text(json, 'issuer')),
    clientId: text(json, 'client_id'),
    clientSecret: undefined,
    secretSource: secretSourceOf(json),
    scopes,
    groupsClaim: (optionalText(json, 'groups_claim') ?? 'groups').split('.'),
    workspaceGrants: grantsOf(json.workspace_roles),
    staffGroups: texts(json, 'staff_groups', []),
    allowedDomains: texts(json, 'allowed_email_domains', []).map(domainOf),
    createUsers: flag(json, 'create_users', false),
    requireMappedGroup: flag(json, 'require_mapped_group', true),
  };
}

/** https, or http on a loopback host (a provider on the same machine, as in the tests). */
function issuerOf(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('issuer: expected a URL');
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new Error('issuer: expected an https URL (http only on a loopback host)');
  if (url.search || url.hash) throw new Error('issuer: expected no query or fragment');
  return raw;
}

function secretSourceOf(json: Json): SecretSource {
  const env = optionalText(json, 'client_secret_env');
  const file = optionalText(json, 'client_secret_file');
  if (env && file) throw new Error('client_secret_env and client_secret_file: give one of them');
  if (env && !ENV_NAME.test(env)) throw new Error('client_secret_env: expected the name of an environment variable');
  return env ? { env } : file ? { file } : undefined;
}

function grantsOf(value: unknown): WorkspaceGrant[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error('workspace_roles: expected an array of {group, workspace, role}');
  return value.map((item, index) => {
    if (!item || typeof item !== 'object') throw new Error(`workspace_roles[${index}]: expected {group, workspace, role}`);
    const grant = item as Json;
    const role = grant.role ?? 'user';
    if (role !== 'user' && role !== 'supervisor') throw new Error(`workspace_roles[${index}].role: expected user or supervisor`);
    return { group: text(grant, 'group'), workspace: text(grant, 'workspace'), role };
  });
}

function domainOf(raw: string): string {
  const domain = raw.toLowerCase();
  if (!DOMAIN.test(domain)) throw new Error(`allowed_email_domains: "${raw}" is not a domain name`);
  return domain;
}

function text(json: Json, key: string): string {
  const value = json[key];
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`${key}: expected a non-empty string`);
  return value;
}

function optionalText(json: Json, key: string): string | undefined {
  return json[key] === undefined ? undefined : text(json, key);
}

function texts(json: Json, key: string, fallback: string[]): string[] {
  const value = json[key];
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item.trim() === '')) throw new Error(`${key}: expected an array of non-empty strings`);
  return value as string[];
}

function flag(json: Json, key: string, fallback: boolean): boolean {
  const value = json[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new Error(`${key}: expected true or false`);
  return value;
}

/** Reads each connection's client secret from its variable or file; a missing one is an error. */
export function withClientSecrets(connections: OidcConnection[], env: Record<string, string | undefined>): OidcConnection[] {
  return connections.map((connection) => {
    const source = connection.secretSource;
    if (!source) return connection;
    const value = 'env' in source ? env[source.env] : readSecretFile(source.file);
    if (!value?.trim()) {
      const where = 'env' in source ? `variable ${source.env}` : `file ${source.file}`;
      throw new Error(`connection "${connection.id}": its client secret (${where}) is missing or empty`);
    }
    return { ...connection, clientSecret: new ClientSecret(value.trim()) };
  });
}

function readSecretFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
