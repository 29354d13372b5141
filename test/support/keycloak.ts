import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseOidcConnections, withClientSecrets, type OidcConnection } from '../../kernel/config/oidc.js';
import { requireEnv } from './services.js';

// Keycloak as the tests drive it (scripts/services/keycloak.sh): a browser
// that follows redirects by hand, keeps cookies per host and fills in
// Keycloak's own login form, and the admin API for the realm's users.

const REALM_FILE = path.resolve('scripts/services/keycloak/didyma-test-realm.json');

/** A client of the realm file, by its id: its secret and the rest of what the file says. */
export function realmClient(clientId: string): { clientId: string; secret: string } {
  const realm = JSON.parse(fs.readFileSync(REALM_FILE, 'utf8')) as { clients: Array<{ clientId: string; secret: string }> };
  const client = realm.clients.find((c) => c.clientId === clientId);
  if (!client) throw new Error(`no client ${clientId} in ${REALM_FILE}`);
  return client;
}

/** Where the test Keycloak is and what its realm holds. */
export function keycloakEnv() {
  return {
    issuer: requireEnv('TEST_OIDC_ISSUER', 'keycloak'),
    adminUrl: requireEnv('TEST_OIDC_ADMIN_URL', 'keycloak'),
    adminUser: requireEnv('TEST_OIDC_ADMIN_USER', 'keycloak'),
    adminPassword: requireEnv('TEST_OIDC_ADMIN_PASSWORD', 'keycloak'),
    clientId: requireEnv('TEST_OIDC_DASHBOARD_CLIENT_ID', 'keycloak'),
    clientSecret: requireEnv('TEST_OIDC_DASHBOARD_CLIENT_SECRET', 'keycloak'),
  };
}

/** Connections to the test Keycloak through the dashboard's client, as `DIDYMA_OIDC_CONNECTIONS` would give them (each object its other fields). */
export function keycloakConnections(connections: Array<Record<string, unknown>>): OidcConnection[] {
  const env = keycloakEnv();
  const client = { issuer: env.issuer, client_id: env.clientId, client_secret_env: 'TEST_SSO_CLIENT_SECRET' };
  return withClientSecrets(parseOidcConnections(JSON.stringify(connections.map((c) => ({ ...client, ...c })))), { TEST_SSO_CLIENT_SECRET: env.clientSecret });
}

export interface Page {
  status: number;
  url: string;
  location: string | undefined;
  text: string;
}

/** A cookie jar per host:port and requests without automatic redirects. */
export class TestBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Page> {
    const target = new URL(url);
    const headers: Record<string, string> = { ...init.headers };
    const cookie = this.cookieHeader(target.host);
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(target, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    this.keep(target.host, response.headers.getSetCookie());
    const location = response.headers.get('location') ?? undefined;
    return { status: response.status, url: target.href, location: location && new URL(location, target).href, text: await response.text() };
  }

  /** A browser with this one's cookies except those of `host` (a visit to that site as if for the first time). */
  without(host: string): TestBrowser {
    const copy = new TestBrowser();
    for (const [jarHost, jar] of this.jars) if (jarHost !== host) copy.jars.set(jarHost, new Map(jar));
    return copy;
  }

  cookie(host: string, name: string): string | undefined {
    return this.jars.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    const jar = this.jars.get(host) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(host, jar);
  }

  private cookieHeader(host: string): string {
    return [...(this.jars.get(host) ?? new Map<string, string>())].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(host: string, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      const jar = this.jars.get(host) ?? new Map<string, string>();
      if (expired) jar.delete(name);
      else jar.set(name, value);
      this.jars.set(host, jar);
    }
  }
}

/**
 * At Keycloak's authorization URL: fills in its login form with the user's
 * credentials (unless Keycloak still has a session in this browser) and
 * returns where Keycloak sends the browser back to.
 */
export async function passKeycloak(browser: TestBrowser, authorizationUrl: string, username: string, password: string): Promise<string> {
  const page = await browser.request(authorizationUrl);
  if (page.status === 302 || page.status === 303) return page.location!;
  const posted = await submitLogin(browser, page, username, password);
  if (posted.status !== 302 || !posted.location) throw new Error(`Keycloak did not accept the credentials of ${username} (status ${posted.status})`);
  return posted.location;
}

/**
 * At Keycloak's device verification page with the user code filled in
 * (`verification_uri_complete`): fills in its login form, then grants or
 * denies the device on Keycloak's consent screen. Returns Keycloak's last page.
 */
export async function passKeycloakDevice(browser: TestBrowser, verificationUri: string, username: string, password: string, grant: boolean): Promise<Page> {
  const form = await followRedirects(browser, await browser.request(verificationUri));
  const consent = await followRedirects(browser, await submitLogin(browser, form, username, password));
  const action = /<form[^>]*action="([^"]+)"/.exec(consent.text)?.[1];
  const code = /name="code" value="([^"]*)"/.exec(consent.text)?.[1];
  if (!action || code === undefined) throw new Error(`no consent screen at Keycloak after the login of ${username} (status ${consent.status})`);
  const answer: Record<string, string> = grant ? { accept: 'Yes' } : { cancel: 'No' };
  return followRedirects(browser, await browser.request(new URL(action.replaceAll('&amp;', '&'), consent.url).href, { form: { code, ...answer } }));
}

async function submitLogin(browser: TestBrowser, page: Page, username: string, password: string): Promise<Page> {
  const action = /<form[^>]*id="kc-form-login"[^>]*action="([^"]+)"/.exec(page.text)?.[1];
  if (!action) throw new Error(`no login form at Keycloak (status ${page.status})`);
  return browser.request(action.replaceAll('&amp;', '&'), { form: { username, password, credentialId: '' } });
}

async function followRedirects(browser: TestBrowser, page: Page): Promise<Page> {
  let current = page;
  while ((current.status === 302 || current.status === 303) && current.location) current = await browser.request(current.location);
  return current;
}

/** The realm's admin API, as the test Keycloak's admin. */
export class KeycloakAdmin {
  private constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  static async connect(): Promise<KeycloakAdmin> {
    const env = keycloakEnv();
    const realm = new URL(env.issuer).pathname.split('/').pop()!;
    const reply = await fetch(`${env.adminUrl}/realms/master/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: env.adminUser, password: env.adminPassword }),
    });
    if (!reply.ok) throw new Error(`Keycloak admin token: ${reply.status} ${await reply.text()}`);
    const { access_token: token } = (await reply.json()) as { access_token: string };
    return new KeycloakAdmin(`${env.adminUrl}/admin/realms/${realm}`, token);
  }

  /** A new user of the realm in these groups, with an e-mail at `domain` (verified unless told otherwise); returns its username and password. */
  async createUser(groups: string[], domain = 'example.test', emailVerified = true): Promise<{ username: string; password: string; email: string; id: string }> {
    const username = `sso-${crypto.randomBytes(5).toString('hex')}`;
    const password = `pw-${crypto.randomBytes(8).toString('hex')}`;
    const email = `${username}@${domain}`;
    await this.call('POST', '/users', {
      username,
      email,
      emailVerified,
      enabled: true,
      firstName: 'Test',
      lastName: username,
      credentials: [{ type: 'password', value: password, temporary: false }],
      groups: groups.map((g) => `/${g}`),
    });
    const [user] = (await this.call('GET', `/users?exact=true&username=${username}`)) as Array<{ id: string }>;
    return { username, password, email, id: user!.id };
  }

  /** Lets the client use the device flow; the realm file does so too, but Keycloak reads it only at its start. */
  async enableDeviceGrant(clientId: string): Promise<void> {
    const [client] = (await this.call('GET', `/clients?clientId=${encodeURIComponent(clientId)}`)) as Array<{ id: string; attributes?: Record<string, string> }>;
    if (!client) throw new Error(`no client ${clientId} in the test realm`);
    if (client.attributes?.['oauth2.device.authorization.grant.enabled'] === 'true') return;
    await this.call('PUT', `/clients/${client.id}`, { ...client, attributes: { ...client.attributes, 'oauth2.device.authorization.grant.enabled': 'true' } });
  }

  /**
   * The realm's client as the realm file describes it, created when missing:
   * Keycloak imports the file only at its first start, so a realm imported
   * before the client was added lacks it.
   */
  async ensureClient(clientId: string): Promise<void> {
    const existing = (await this.call('GET', `/clients?clientId=${encodeURIComponent(clientId)}`)) as unknown[];
    if (existing.length > 0) return;
    await this.call('POST', '/clients', realmClient(clientId));
  }

  async leaveGroup(userId: string, group: string): Promise<void> {
    await this.call('DELETE', `/users/${userId}/groups/${await this.groupId(group)}`);
  }

  async deleteUser(userId: string): Promise<void> {
    await this.call('DELETE', `/users/${userId}`);
  }

  private async groupId(name: string): Promise<string> {
    const groups = (await this.call('GET', `/groups?exact=true&search=${encodeURIComponent(name)}`)) as Array<{ id: string; name: string }>;
    const group = groups.find((g) => g.name === name);
    if (!group) throw new Error(`no group ${name} in the test realm`);
    return group.id;
  }

  private async call(method: string, path: string, json?: unknown): Promise<unknown> {
    const reply = await fetch(`${this.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    if (!reply.ok) throw new Error(`Keycloak admin ${method} ${path}: ${reply.status} ${await reply.text()}`);
    const text = await reply.text();
    return text ? JSON.parse(text) : undefined;
  }
}
