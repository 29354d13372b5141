import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { loadConfig } from '../../kernel/config/config.js';
import type { ConfigValues } from '../../kernel/config/variables.js';
import { createLogger, type Logger } from '../../infra/logging/logger.js';
import { generateSigningKeys } from '../../features/auth/keys.js';
import { createPlatform, type Platform } from '../../platform/platform.js';
import { addMember, createUser, createWorkspace } from '../../features/identity/admin.js';
import type { Role } from '../../features/auth/principal.js';
import { createAuthServer } from '../../api/auth/server.js';
import { createPrivateServer } from '../../api/private/server.js';
import { createPublicServer } from '../../api/public/server.js';
import { SecretBox } from '../../infra/crypto/secrets.js';
import { createHttpServer } from '../../infra/http/http-server.js';
import type { Db } from '../../infra/db/database.js';
import { sharedDatabase } from './database.js';
import { Client } from './http.js';

/** One signing key for every platform of a test process, so tokens cross them. */
export const testKeys = generateSigningKeys();

export const PASSWORD = 'Correct-Horse-Battery-9';

export interface TestPlatform {
  platform: Platform;
  auth: Client;
  private: Client;
  public: Client;
  dataDir: string;
  close(): Promise<void>;
}

/** One encryption key per test process too (child processes read it from `testSecretKeyFile`). */
const testSecretKey = crypto.randomBytes(32);
export const testBox = new SecretBox(testSecretKey);
export const testSecretKeyFile = path.join(os.tmpdir(), `didyma-test-secret-${process.pid}.key`);
fs.writeFileSync(testSecretKeyFile, testSecretKey, { mode: 0o600 });

export async function listen(app: Express): Promise<{ url: string; server: http.Server }> {
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}

/** A platform over the shared test database (or `options.db`), its servers listening on free ports. */
export async function startTestPlatform(
  overrides: Partial<ConfigValues> = {},
  now?: () => number,
  options: { logger?: Logger; db?: Db } = {},
): Promise<TestPlatform> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-test-'));
  const config = loadConfig(
    {
      DIDYMA_VALIDATE_RESPONSES: 'true',
      DIDYMA_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DIDYMA_DATA_DIR: dataDir,
      // Test doubles of model servers and registries listen on loopback.
      DIDYMA_DEV_MODE: 'true',
      DIDYMA_SWEEP_INTERVAL_MS: '50',
      DIDYMA_EXECUTOR_RETRY_BACKOFF_MS: '10',
      // Login windows live in the shared test database, so every platform of a test process
      // counts into them from 127.0.0.1: the rate-limit tests set their own limits and addresses.
      DIDYMA_LOGIN_LIMIT_PER_SOURCE: '100000',
      DIDYMA_LOGIN_LIMIT_PER_ACCOUNT: '100000',
      DIDYMA_LOGIN_LIMIT_PER_CLIENT: '100000',
      DIDYMA_SSO_STARTS_PER_SOURCE: '100000',
    },
    overrides,
  );
  const platform = createPlatform(config, { db: options.db ?? (await sharedDatabase()), keys: testKeys, box: testBox, logger: options.logger ?? createLogger(config.logLevel), now });
  const servers = await Promise.all([createAuthServer, createPrivateServer, createPublicServer].map((create) => listen(create(platform))));
  platform.start();
  // As startServers: the private server runs the reconciler of the custom resources and the follower of KServe revisions (Kubernetes mode).
  platform.kube?.startPrivateTasks();
  return {
    platform,
    auth: new Client(servers[0]!.url),
    private: new Client(servers[1]!.url),
    public: new Client(servers[2]!.url),
    dataDir,
    async close() {
      for (const { server } of servers) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await platform.close();
      // Test cleanup only: executors claim any workspace's queued work, so what this platform's tests
      // left queued (model servers since closed) would take the executors of later tests.
      await platform.db('invocations').whereIn('status', ['QUEUED', 'IN_PROGRESS']).delete();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const unique = (prefix: string) => `${prefix}-${crypto.randomBytes(5).toString('hex')}`;

export interface TestUser {
  id: number;
  email: string;
  password: string;
}

export async function makeUser(platform: Platform, options: { staff?: boolean } = {}): Promise<TestUser> {
  const email = `${unique('user')}@example.test`;
  const user = await createUser(platform.db, { email, password: PASSWORD, staff: options.staff });
  return { id: user.id, email, password: PASSWORD };
}

export async function makeWorkspace(platform: Platform, members: Array<[TestUser, Role]> = [], name = unique('ws')) {
  const workspace = await createWorkspace(platform.db, name);
  for (const [user, role] of members) await addMember(platform.db, user.email, workspace.name, role);
  return { id: workspace.id, name: workspace.name };
}

/**
 * A staff user and its tokens: `token` bound to a workspace of its own, as a
 * staff user must log in to act as staff, and `unbound`, which only lists
 * its workspaces and verifies itself.
 */
export async function makeStaff(t: TestPlatform) {
  const user = await makeUser(t.platform, { staff: true });
  const home = await makeWorkspace(t.platform, [[user, 'user']]);
  return { user, home, token: (await login(t.auth, user, home.name)).access, unbound: (await login(t.auth, user)).access };
}

/** Logs in through the API and returns the access token (and refresh). */
export async function login(client: Client, user: TestUser, workspace?: string) {
  const reply = await client.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password, ...(workspace ? { workspace } : {}) } });
  if (reply.status !== 200) throw new Error(`login failed: ${reply.status} ${reply.text}`);
  return reply.body as { access: string; refresh: string };
}
