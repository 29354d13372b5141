// The single catalogue of environment variables. docs/configuration.md is generated
// from it (`didyma config-table`) and a test keeps the two in step.

import { parseOidcConnections } from './oidc.js';
import { parseServiceAccountGrants, parseWorkloadIssuers } from './workload.js';

export type Parser<T> = (raw: string) => T;

export interface Variable<T> {
  name: string;
  default: string | undefined;
  description: string;
  parse: Parser<T>;
}

const variable = <T>(name: string, def: string | undefined, description: string, parse: Parser<T>): Variable<T> => ({
  name,
  default: def,
  description,
  parse,
});

export const parsers = {
  string: (raw: string) => raw,
  boolean: (raw: string) => {
    const value = raw.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(value)) return true;
    if (['false', '0', 'no', 'off'].includes(value)) return false;
    throw new Error('expected true or false');
  },
  integer: (min: number, max: number) => (raw: string) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error('expected an integer');
    const value = Number(raw);
    if (value < min || value > max) throw new Error(`expected an integer between ${min} and ${max}`);
    return value;
  },
  url: (protocols: string[]) => (raw: string) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('expected a URL');
    }
    if (!protocols.includes(url.protocol)) throw new Error(`expected a URL with scheme ${protocols.join(' or ')}`);
    return raw.replace(/\/+$/, '');
  },
  oneOf: <T extends string>(values: readonly T[]) => (raw: string) => {
    if (!(values as readonly string[]).includes(raw)) throw new Error(`expected one of ${values.join(', ')}`);
    return raw as T;
  },
  /** A Kubernetes namespace name (an RFC 1123 label). */
  namespace: (raw: string) => {
    if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(raw)) throw new Error('expected a namespace name: at most 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit');
    return raw;
  },
  /**
   * Namespaces opened to workspaces: `namespace=workspace|workspace` or
   * `namespace=*` (every workspace), comma-separated; a namespace once.
   */
  namespaceGrants: (raw: string): ReadonlyMap<string, readonly string[] | '*'> => {
    const grants = new Map<string, readonly string[] | '*'>();
    for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
      const match = /^([^=\s]+)\s*=\s*(\S+)$/.exec(part);
      if (!match) throw new Error(`expected namespace=workspace|workspace or namespace=*; "${part}" is not one`);
      const namespace = parsers.namespace(match[1]!);
      if (grants.has(namespace)) throw new Error(`namespace ${namespace} is named twice`);
      const workspaces = match[2]!.split('|').filter(Boolean);
      grants.set(namespace, workspaces.length === 1 && workspaces[0] === '*' ? '*' : workspaces);
    }
    return grants;
  },
  /** A PostgreSQL role name as written unquoted: lowercase letters, digits and underscores. */
  identifier: (raw: string) => {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) throw new Error('expected a role name: lowercase letters, digits and underscores, not starting with a digit');
    return raw;
  },
  optional: <T>(parse: Parser<T>) => (raw: string) => (raw === '' ? undefined : parse(raw)),
  /** Comma-separated durations (`500ms`, `5s`, `30m`, `2h`) as milliseconds. */
  durations: (raw: string) => {
    const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
    const values = raw.split(',').map((part) => {
      const match = /^\s*(\d+)(ms|s|m|h)\s*$/.exec(part);
      if (!match) throw new Error(`expected durations such as 5s,5m,2h; "${part.trim()}" is not one`);
      return Number(match[1]) * unitMs[match[2]!]!;
    });
    if (values.length > 50) throw new Error('expected at most 50 durations');
    return values;
  },
};

const port = parsers.integer(0, 65535);

export const variables = {
  dataDir: variable('DIDYMA_DATA_DIR', './.didyma', 'Folder of the embedded database, dev keys and filesystem storage.', parsers.string),
  databaseUrl: variable('DATABASE_URL', '', 'PostgreSQL URL. Empty: embedded PGlite under the data folder.', parsers.optional(parsers.url(['postgres:', 'postgresql:']))),
  databasePoolMax: variable('DATABASE_POOL_MAX', '10', 'Connections per process in the PostgreSQL pool.', parsers.integer(1, 200)),
  databasePassword: variable(
    'DATABASE_PASSWORD',
    '',
    'Password of the runtime user, for a DATABASE_URL and DATABASE_LISTEN_URL that carry none (any characters: it is encoded into them). Empty: the URLs\' own.',
    parsers.optional(parsers.string),
  ),
  databaseMigrationPassword: variable('DATABASE_MIGRATION_PASSWORD', '', 'Password of the migration user, for a DATABASE_MIGRATION_URL that carries none. Empty: the URL\'s own.', parsers.optional(parsers.string)),
  databaseCaFile: variable(
    'DATABASE_CA_FILE',
    '',
    'PEM file of the CA that signed PostgreSQL\'s certificate: every connection (pool, change feed, migrations) then uses TLS and checks the certificate and the host name, as `sslmode=verify-full`. Empty: what the URL says (`sslmode`, `sslrootcert`).',
    parsers.optional(parsers.string),
  ),
  databaseMigrationUrl: variable(
    'DATABASE_MIGRATION_URL',
    '',
    'PostgreSQL URL of the user that owns the schema, which `didyma migrate` (and `admin bootstrap`) run the migrations with; a direct connection, not through a pooler. Empty: DATABASE_URL.',
    parsers.optional(parsers.url(['postgres:', 'postgresql:'])),
  ),
  databaseRuntimeRole: variable(
    'DATABASE_RUNTIME_ROLE',
    '',
    'Role of DATABASE_URL when it differs from the migration user: after the migrations, `didyma migrate` grants it reading and writing rows of every table and using every sequence (now and, by default privileges, in later migrations), and nothing that changes the schema. Empty: no grants.',
    parsers.optional(parsers.identifier),
  ),
  databasePooler: variable(
    'DATABASE_POOLER',
    'none',
    '`transaction`: DATABASE_URL goes through a transaction-pooling PgBouncer, so no statement relies on its connection beyond its transaction: no startup parameters (set `jit=off` and `statement_timeout` on the runtime role) and no named prepared statements; the change feed then needs DATABASE_LISTEN_URL or `DATABASE_LISTEN=off`. `none`: a direct connection.',
    parsers.oneOf(['none', 'transaction'] as const),
  ),
  databaseListenUrl: variable(
    'DATABASE_LISTEN_URL',
    '',
    'PostgreSQL URL of the change feed\'s one LISTEN connection per process: a direct connection to the server when DATABASE_URL goes through a pooler. Empty: DATABASE_URL.',
    parsers.optional(parsers.url(['postgres:', 'postgresql:'])),
  ),
  databaseListen: variable(
    'DATABASE_LISTEN',
    'on',
    '`off`: no LISTEN connection at all; the read caches read through and event streams and deliveries poll (about a second late), for a pooler with no direct way to the server.',
    parsers.boolean,
  ),
  logLevel: variable('DIDYMA_LOG_LEVEL', 'info', 'pino log level.', parsers.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const)),
  requestLogLevel: variable(
    'DIDYMA_REQUEST_LOG_LEVEL',
    '',
    'Level of the one log line per HTTP request (a 5xx answer\'s line is always an error). Empty: `info`, and `debug` under `didyma dev`, whose terminal keeps to the start-up message, warnings and invocations; set `info` there to see every request.',
    parsers.optional(parsers.oneOf(['error', 'warn', 'info', 'debug', 'trace'] as const)),
  ),
  bindHost: variable('DIDYMA_BIND_HOST', '127.0.0.1', 'Address the HTTP servers listen on (0.0.0.0 in containers).', parsers.string),
  authPort: variable('DIDYMA_AUTH_PORT', '8080', 'Port of the auth server.', port),
  privatePort: variable('DIDYMA_PRIVATE_PORT', '8081', 'Port of the private server.', port),
  publicPort: variable('DIDYMA_PUBLIC_PORT', '8082', 'Port of the public server.', port),
  devMode: variable('DIDYMA_DEV_MODE', 'false', 'Development mode: loopback URLs and filesystem storage allowed. `didyma dev` turns it on.', parsers.boolean),
  jwtPrivateKeyFile: variable('DIDYMA_JWT_PRIVATE_KEY_FILE', '', 'PEM (PKCS#8) Ed25519 signing key of the auth server. Empty: generated under the data folder.', parsers.optional(parsers.string)),
  jwtPublicKeyFile: variable('DIDYMA_JWT_PUBLIC_KEY_FILE', '', 'PEM (SPKI) Ed25519 verification key for servers that do not sign. Empty: derived from the signing key.', parsers.optional(parsers.string)),
  jwtJwksUrl: variable(
    'DIDYMA_JWT_JWKS_URL',
    '',
    "The auth server's published keys (`…/api/auth/jwks.json`), for servers that verify tokens without holding a key: fetched when first needed, again every 10 minutes and for a token with an unknown `kid` (at most once per DIDYMA_JWT_JWKS_COOLDOWN_SECONDS). Used only when neither key file is set.",
    parsers.optional(parsers.string),
  ),
  jwtJwksCooldownSeconds: variable('DIDYMA_JWT_JWKS_COOLDOWN_SECONDS', '30', 'Least time between two fetches of DIDYMA_JWT_JWKS_URL, whatever the `kid`s tokens name.', parsers.integer(0, 3600)),
  jwtIssuer: variable('DIDYMA_JWT_ISSUER', 'didyma', 'JWT `iss` claim issued and required.', parsers.string),
  jwtAudience: variable('DIDYMA_JWT_AUDIENCE', 'didyma-api', 'JWT `aud` claim issued and required.', parsers.string),
  accessTokenTtl: variable('DIDYMA_ACCESS_TOKEN_TTL_SECONDS', '900', 'Lifetime of access tokens.', parsers.integer(30, 86400)),
  refreshTokenTtl: variable('DIDYMA_REFRESH_TOKEN_TTL_SECONDS', '86400', 'Lifetime of refresh tokens.', parsers.integer(60, 2592000)),
  tokenCacheSize: variable('DIDYMA_TOKEN_CACHE_SIZE', '10000', 'Verified-token cache entries per process (signature checks only).', parsers.integer(0, 1000000)),
  readCacheSize: variable(
    'DIDYMA_READ_CACHE_SIZE',
    '10000',
    'Entries per process of the caches of token subjects (user, workspace, membership) and live models, invalidated by PostgreSQL change notifications; 0 reads them on every request.',
    parsers.integer(0, 1000000),
  ),
  exposeTokenApi: variable('DIDYMA_EXPOSE_TOKEN_API', 'false', 'Mount the API-token management endpoints on the auth server.', parsers.boolean),
  loginLimitPerSource: variable(
    'DIDYMA_LOGIN_LIMIT_PER_SOURCE',
    '10',
    'Failed login or client-credential attempts per account and source (an IPv4 address, an IPv6 /64) and window; past them that source is refused (429) on that account until the window ends. Other sources are not. A successful login clears that source\'s count.',
    parsers.integer(1, 100000),
  ),
  loginLimitPerAccount: variable(
    'DIDYMA_LOGIN_LIMIT_PER_ACCOUNT',
    '100',
    'Failed login or client-credential attempts per account and window, from every source together; past them an attempt from a source that has not logged in to the account recently waits a delay growing with the failures (at most `DIDYMA_LOGIN_DELAY_MAX_MS`) before it is checked. Never a lock.',
    parsers.integer(1, 1000000),
  ),
  loginLimitPerClient: variable('DIDYMA_LOGIN_LIMIT_PER_CLIENT', '60', 'Failed login or client-credential attempts per source and window, on any account (successful ones are not counted); past them the source is refused (429) everywhere.', parsers.integer(1, 100000)),
  loginDelayMaxMs: variable('DIDYMA_LOGIN_DELAY_MAX_MS', '3000', 'Longest delay of an attempt on an account past `DIDYMA_LOGIN_LIMIT_PER_ACCOUNT`. 0: no delay.', parsers.integer(0, 30000)),
  loginDelayMaxWaiting: variable(
    'DIDYMA_LOGIN_DELAY_MAX_WAITING',
    '32',
    'Attempts one auth process holds in a delay at once (one per source); one more is answered 429 with `Retry-After` at once. Keep it well below `DIDYMA_MAX_IN_FLIGHT`: each holds a request slot.',
    parsers.integer(1, 10000),
  ),
  loginKnownSourceDays: variable('DIDYMA_LOGIN_KNOWN_SOURCE_DAYS', '30', 'How long a source that logged in to an account is known to it: a known source never waits for other sources\' failures.', parsers.integer(1, 365)),
  loginLimitWindow: variable('DIDYMA_LOGIN_LIMIT_WINDOW_SECONDS', '60', 'Window of the login rate limits.', parsers.integer(1, 86400)),
  trustProxy: variable('DIDYMA_TRUST_PROXY', 'false', 'Trust X-Forwarded-For from this many hops (number) or `true`/`false`.', parsers.string),
  maxBodyBytes: variable('DIDYMA_MAX_BODY_BYTES', '1048576', 'Largest JSON or form body accepted.', parsers.integer(1024, 104857600)),
  maxJsonDepth: variable('DIDYMA_MAX_JSON_DEPTH', '100', 'Deepest nesting of a JSON request body accepted; deeper is a 400 before it is parsed. (JSON text inside an invocation or feedback body: at most 100.)', parsers.integer(8, 10000)),
  maxInFlight: variable('DIDYMA_MAX_IN_FLIGHT', '256', 'Load shedding: requests one HTTP server handles at once; more are refused with 503 and `Retry-After` (health checks and `/metrics` excepted). 0: no limit.', parsers.integer(0, 1000000)),
  maxEventStreams: variable(
    'DIDYMA_MAX_EVENT_STREAMS',
    '1000',
    'Session event streams (`GET …/session/{id}/events`) one public server process holds at once, counted apart from DIDYMA_MAX_IN_FLIGHT (a stream gives its request slot back once it starts); more are refused with 503 and `Retry-After`.',
    parsers.integer(1, 1000000),
  ),
  maxEventStreamsPerUser: variable(
    'DIDYMA_MAX_EVENT_STREAMS_PER_USER',
    '10',
    'Session event streams one user (or API token\'s user, or OAuth application) may hold open at once on one public server process; more are refused with 429 and `Retry-After`. A browser keeps six connections per host, so ten leaves room for a few tabs and a script.',
    parsers.integer(1, 1000000),
  ),
  maxEventStreamsPerWorkspace: variable(
    'DIDYMA_MAX_EVENT_STREAMS_PER_WORKSPACE',
    '100',
    'Session event streams the members of one workspace may hold open at once on one public server process; more are refused with 429 and `Retry-After`. Keep it well under DIDYMA_MAX_EVENT_STREAMS, so several workspaces fit.',
    parsers.integer(1, 1000000),
  ),
  maxPreferWaitSeconds: variable(
    'DIDYMA_MAX_PREFER_WAIT_SECONDS',
    '30',
    'The longest `Prefer: wait=N` (RFC 7240) a `POST …/session/{id}/invocation` is held for its invocation to finish; a longer wait is cut to this, and `Preference-Applied` names the wait honoured. Keep it under the idle timeout of every proxy in front of the public server. 0: never wait (every such request is answered at once, 201).',
    parsers.integer(0, 120),
  ),
  maxPreferWaits: variable(
    'DIDYMA_MAX_PREFER_WAITS',
    '1000',
    'Invocation requests waiting with `Prefer: wait` that one public server process holds at once, counted apart from DIDYMA_MAX_IN_FLIGHT (a waiting request gives its request slot back once its invocation is queued); past it a request is answered at once, as without the header (201), and nothing is refused.',
    parsers.integer(1, 1000000),
  ),
  maxPreferWaitsPerWorkspace: variable(
    'DIDYMA_MAX_PREFER_WAITS_PER_WORKSPACE',
    '100',
    'Invocation requests waiting with `Prefer: wait` that the members of one workspace hold at once on one public server process; past it their requests are answered at once, as without the header (201). Keep it well under DIDYMA_MAX_PREFER_WAITS, so several workspaces fit.',
    parsers.integer(1, 1000000),
  ),
  validationThreads: variable('DIDYMA_VALIDATION_THREADS', '2', 'Worker threads per server process that check invocation and feedback bodies against their model\'s schema, off the event loop that answers requests (started on the first check that needs one: a check whose worst case is about a millisecond runs in place). Workspaces waiting for them are served in turn.', parsers.integer(1, 64)),
  validationWaitingPerWorkspace: variable(
    'DIDYMA_VALIDATION_WAITING_PER_WORKSPACE',
    '32',
    'Invocation and feedback bodies of one workspace that may wait, per server process, for a validation thread; more are refused with 429 and `Retry-After`, recording nothing.',
    parsers.integer(1, 100000),
  ),
  validationTimeoutMs: variable(
    'DIDYMA_VALIDATION_TIMEOUT_MS',
    '1000',
    'Longest one invocation or feedback body may take to check against its model\'s schema, counted from its arrival (its wait for a validation thread included, not a thread\'s own start): past it the check\'s thread is stopped and the request is a 400 that records nothing.',
    parsers.integer(10, 60000),
  ),
  idempotencyRetentionHours: variable(
    'DIDYMA_IDEMPOTENCY_RETENTION_HOURS',
    '24',
    'How long the answer to a POST sent with an `Idempotency-Key` is kept: a retry with the same key within it gets that answer again instead of doing the work twice. Older keys are purged and may be used anew.',
    parsers.integer(1, 8760),
  ),
  eventRetentionHours: variable(
    'DIDYMA_EVENT_RETENTION_HOURS',
    '24',
    'How long the status changes of invocations are kept for the session event streams: a client reconnecting with a `Last-Event-ID` older than this misses what was purged.',
    parsers.integer(1, 8760),
  ),
  webhookRetrySchedule: variable(
    'DIDYMA_WEBHOOK_RETRY_SCHEDULE',
    '5s,5m,30m,2h,5h,10h,10h',
    'The waits between the attempts of a webhook delivery, after its first (each with up to 20% jitter); after the last one fails the delivery is `failed`. The default spans a little over 27 hours.',
    parsers.durations,
  ),
  webhookTimeoutMs: variable('DIDYMA_WEBHOOK_TIMEOUT_MS', '15000', 'How long a webhook receiver has to answer one attempt, connection included.', parsers.integer(100, 120000)),
  webhookPollMs: variable(
    'DIDYMA_WEBHOOK_POLL_MS',
    '1000',
    'How often the webhook deliverer looks for due deliveries when nothing wakes it (new deliveries wake it at once through the change notifications).',
    parsers.integer(10, 60000),
  ),
  webhookConcurrency: variable('DIDYMA_WEBHOOK_CONCURRENCY', '32', 'Webhook deliveries one process sends at once, shared fairly between workspaces (the one with the fewest in flight goes first); one endpoint gets at most half that many in flight, counted across processes, so a slow receiver leaves its workspace\'s other endpoints theirs.', parsers.integer(1, 256)),
  webhookMaxInFlightPerWorkspace: variable(
    'DIDYMA_WEBHOOK_MAX_IN_FLIGHT_PER_WORKSPACE',
    '',
    'Webhook deliveries of one workspace in flight at once, counted across processes. Less than `DIDYMA_WEBHOOK_CONCURRENCY`, so a workspace with slow receivers leaves every process slots for the others. Empty: three quarters of `DIDYMA_WEBHOOK_CONCURRENCY` (24 of 32), at least 1.',
    parsers.optional(parsers.integer(1, 255)),
  ),
  webhookMaxEndpoints: variable(
    'DIDYMA_WEBHOOK_MAX_ENDPOINTS',
    '20',
    'Webhook endpoints one workspace may have; registering one more is a 409 (`endpoint_limit`). Lowering it keeps the endpoints already registered.',
    parsers.integer(1, 10000),
  ),
  webhookRetentionHours: variable(
    'DIDYMA_WEBHOOK_RETENTION_HOURS',
    '168',
    'How long finished webhook deliveries (delivered or failed) and their attempts are kept for listing and redelivery.',
    parsers.integer(1, 8760),
  ),
  auditRetentionDays: variable(
    'DIDYMA_AUDIT_RETENTION_DAYS',
    '365',
    'How long audit records are kept ([audit.md](audit.md)); older ones are deleted by a purge task, the only deletion of the append-only trail.',
    parsers.integer(1, 36500),
  ),
  auditRefusedPerMinute: variable(
    'DIDYMA_AUDIT_REFUSED_PER_MINUTE',
    '60',
    'Audit records of refused requests (401, 403, and anonymous failures such as failed logins) kept per source address and action per minute, per process; the rest are counted in the next record kept.',
    parsers.integer(1, 100000),
  ),
  maxLogoBytes: variable('DIDYMA_MAX_LOGO_BYTES', '1048576', 'Largest workspace logo accepted.', parsers.integer(1024, 10485760)),
  adminEmail: variable('DIDYMA_ADMIN_EMAIL', 'admin@didyma.local', 'E-mail of the staff user created at first start.', parsers.string),
  adminPassword: variable('DIDYMA_ADMIN_PASSWORD', '', 'Password of that user. Empty: generated and printed once.', parsers.optional(parsers.string)),
  dashboardUrl: variable('DIDYMA_DASHBOARD_URL', 'http://localhost:8080/dashboard', 'Public URL of the dashboard, used in invitation links. An https URL also makes its cookies `Secure` (and `__Host-`) whatever the request looks like behind a proxy.', parsers.url(['http:', 'https:'])),
  privateUrl: variable('DIDYMA_PRIVATE_URL', '', 'Public URL of the private server, for the dashboard\'s link to its API page (`/docs`). Empty: the dashboard\'s host on `DIDYMA_PRIVATE_PORT`.', parsers.optional(parsers.url(['http:', 'https:']))),
  publicUrl: variable('DIDYMA_PUBLIC_URL', '', 'Public URL of the public server, for the dashboard\'s link to its API page (`/docs`). Empty: the dashboard\'s host on `DIDYMA_PUBLIC_PORT`.', parsers.optional(parsers.url(['http:', 'https:']))),
  termsUrl: variable('DIDYMA_TERMS_URL', '', 'Terms of service linked from the dashboard\'s registration form. Empty: the form asks for acceptance without a link.', parsers.optional(parsers.url(['http:', 'https:']))),
  privacyUrl: variable('DIDYMA_PRIVACY_URL', '', 'Privacy policy linked from the dashboard\'s registration form. Empty: the form asks for acceptance without a link.', parsers.optional(parsers.url(['http:', 'https:']))),
  invitationTtl: variable('DIDYMA_INVITATION_TTL_SECONDS', '604800', 'Lifetime of invitations.', parsers.integer(60, 31536000)),
  oidcConnections: variable(
    'DIDYMA_OIDC_CONNECTIONS',
    '',
    'OpenID Providers people sign in with from the dashboard, as a JSON array: each `{id, display_name, issuer, client_id, client_secret_env \\| client_secret_file, scopes, groups_claim, workspace_roles: [{group, workspace, role}], staff_groups, allowed_email_domains, create_users, require_mapped_group}` (docs/sso.md). Empty: password sign-in only.',
    parseOidcConnections,
  ),
  ssoStartsPerSource: variable(
    'DIDYMA_SSO_STARTS_PER_SOURCE',
    '30',
    'Single sign-ons one source (an IPv4 address, an IPv6 /64) may have started and not yet finished; a start lives at most 10 minutes. Past them its next start is refused (429) until one of them finishes or ends; other sources are not.',
    parsers.integer(1, 100000),
  ),
  passwordSignIn: variable(
    'DIDYMA_PASSWORD_SIGN_IN',
    'everyone',
    'Who may sign in with a password (the API\'s token/obtain and the dashboard): `everyone`, or `staff` only, as a break-glass once people sign in through single sign-on (docs/sso.md).',
    parsers.oneOf(['everyone', 'staff'] as const),
  ),
  workloadIssuers: variable(
    'DIDYMA_WORKLOAD_ISSUERS',
    '',
    'Issuers whose JWTs workloads exchange at `/o/token` for didyma access tokens (RFC 8693), as a JSON array: each `{issuer, audience, jwks_uri, algorithms, claim, mappings: [{value, workspace, role}]}` (docs/workload-identity.md). Empty: none.',
    parseWorkloadIssuers,
  ),
  workloadServiceAccounts: variable(
    'DIDYMA_WORKLOAD_SERVICE_ACCOUNTS',
    '',
    'Kubernetes ServiceAccounts whose tokens workloads exchange at `/o/token`, checked by TokenReview, as a JSON array: each `{namespace, service_account, workspace, role}` (docs/workload-identity.md). Needs `DIDYMA_WORKLOAD_TOKEN_REVIEW`. Empty: none.',
    parseServiceAccountGrants,
  ),
  workloadTokenReview: variable(
    'DIDYMA_WORKLOAD_TOKEN_REVIEW',
    'off',
    'Where the auth server sends ServiceAccount tokens to be checked (TokenReview): `in-cluster` (its pod\'s ServiceAccount, which needs `create` on `tokenreviews`), `kubeconfig` (the file of `KUBECONFIG`), or `off`.',
    parsers.oneOf(['off', 'in-cluster', 'kubeconfig'] as const),
  ),
  workloadAudience: variable('DIDYMA_WORKLOAD_AUDIENCE', 'didyma', 'The audience a ServiceAccount token must be issued for (the `audience` of its projected volume or TokenRequest).', parsers.string),
  workloadJwksCooldownSeconds: variable(
    'DIDYMA_WORKLOAD_JWKS_COOLDOWN_SECONDS',
    '30',
    'Least time between two fetches of one workload issuer\'s keys: a token with an unknown `kid` fetches them again at most this often.',
    parsers.integer(1, 3600),
  ),
  secretKeyFile: variable('DIDYMA_SECRET_KEY_FILE', '', 'Key (32 bytes, raw or base64) encrypting credentials at rest. Empty: generated under the data folder.', parsers.optional(parsers.string)),
  egressAllowCidrs: variable(
    'DIDYMA_EGRESS_ALLOW_CIDRS',
    '',
    'Comma-separated CIDRs inside which private addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) may be called: registries, model servers, S3 endpoints (the chart puts the cluster\'s Pod and Service ranges here). Empty: no private address. Loopback, link-local, metadata, multicast and the platform\'s own database, broker, Prometheus and SMTP server are refused even inside them.',
    parsers.string,
  ),
  urlAllow: variable('DIDYMA_URL_ALLOW', '', 'Comma-separated hosts, `*.suffix` or CIDRs the platform may call (registries, model servers, S3 endpoints). Empty: any public address, and private ones inside `DIDYMA_EGRESS_ALLOW_CIDRS`.', parsers.string),
  urlDeny: variable('DIDYMA_URL_DENY', '', 'Comma-separated hosts, `*.suffix` or CIDRs never called. Link-local and cloud metadata addresses are always denied, loopback unless dev mode.', parsers.string),
  upstreamConnectTimeoutMs: variable(
    'DIDYMA_UPSTREAM_CONNECT_TIMEOUT_MS',
    '5000',
    'Time every outbound connection (registries, model servers, tracking servers, S3 endpoints, Prometheus, the SMTP server) has to resolve its name and connect, TLS handshake included.',
    parsers.integer(100, 600000),
  ),
  upstreamHeadersTimeoutMs: variable(
    'DIDYMA_UPSTREAM_HEADERS_TIMEOUT_MS',
    '',
    'Time a registry or model server has, from a request sent, to answer with its status and headers (and the SMTP server to greet). Empty: `DIDYMA_UPSTREAM_TIMEOUT_MS` (a model server thinks before it answers, so the two are usually the same).',
    parsers.optional(parsers.integer(100, 600000)),
  ),
  upstreamTimeoutMs: variable('DIDYMA_UPSTREAM_TIMEOUT_MS', '10000', 'Timeout of one call to a registry or model server, its answer read to the end (and the longest silence of the SMTP server). When a timeout passes, the connection is closed.', parsers.integer(100, 600000)),
  storageHeadersTimeoutMs: variable(
    'DIDYMA_STORAGE_HEADERS_TIMEOUT_MS',
    '10000',
    'Time an S3 endpoint has, from a request sent, to answer with its status and headers. The check of a storage registration gets this long for each of its requests, answer included.',
    parsers.integer(100, 600000),
  ),
  storageTimeoutMs: variable(
    'DIDYMA_STORAGE_TIMEOUT_MS',
    '300000',
    'Timeout of one request to an S3 endpoint, its body included: a part of an upload, or a whole download streamed to a client (a slower download is cut). When a timeout passes, the connection is closed.',
    parsers.integer(1000, 86400000),
  ),
  upstreamMaxResponseBytes: variable('DIDYMA_UPSTREAM_MAX_RESPONSE_BYTES', '10485760', 'Largest response read from a registry or model server.', parsers.integer(1024, 1073741824)),
  maxUploadBytes: variable('DIDYMA_MAX_UPLOAD_BYTES', '104857600', 'Largest file accepted by proxy_upload.', parsers.integer(1, 10737418240)),
  uploadMediaTypes: variable('DIDYMA_UPLOAD_MEDIA_TYPES', 'application/json,application/pdf,application/zip,application/octet-stream,text/plain,text/csv,text/markdown,image/png,image/jpeg,image/gif,image/webp', 'Media types proxy_upload accepts (`type/*` allowed).', parsers.string),
  datasetMaxBytes: variable('DIDYMA_DATASET_MAX_BYTES', '1073741824', 'Largest file (its records, its table) one dataset export may write (413 past it).', parsers.integer(1024, 107374182400)),
  uploadTtl: variable('DIDYMA_UPLOAD_TTL_SECONDS', '900', 'Lifetime of an upload id from request_upload.', parsers.integer(10, 86400)),
  filesystemStorage: variable('DIDYMA_FILESYSTEM_STORAGE', 'false', 'Allow the dev-only FilesystemStorage class (always on in `didyma dev`). Files go under the data folder.', parsers.boolean),
  amqpUrl: variable('DIDYMA_AMQP_URL', '', 'RabbitMQ URL (amqp://…). Empty: the in-process queue (one process only).', parsers.optional(parsers.url(['amqp:', 'amqps:']))),
  amqpPassword: variable('DIDYMA_AMQP_PASSWORD', '', 'Password of the RabbitMQ user, for a DIDYMA_AMQP_URL that carries none (any characters: it is encoded into it). Empty: the URL\'s own.', parsers.optional(parsers.string)),
  amqpCaFile: variable('DIDYMA_AMQP_CA_FILE', '', 'PEM file of the CA that signed RabbitMQ\'s certificate, for an `amqps://` URL (the certificate and host name are checked). Empty: the system\'s CAs.', parsers.optional(parsers.string)),
  queueName: variable('DIDYMA_QUEUE_NAME', 'didyma.invocations', 'Name the RabbitMQ queue of executor wake-ups derives from (`<name>.wakeups`).', parsers.string),
  executorConcurrency: variable('DIDYMA_EXECUTOR_CONCURRENCY', '8', 'Model calls one executor makes at once; it claims up to twice as many ahead, so database work overlaps the calls.', parsers.integer(1, 1000)),
  executorLeaseSeconds: variable('DIDYMA_EXECUTOR_LEASE_SECONDS', '10', 'Lease of a running invocation: its executor renews it every third of this; when an executor stops renewing (it died), the invocation is queued again within about this long and its late result refused.', parsers.integer(2, 3600)),
  executorRetryBackoffMs: variable('DIDYMA_EXECUTOR_RETRY_BACKOFF_MS', '500', 'First delay before a transient model-server failure is retried, for models whose retry policy names no `backoff_ms` (it grows by the policy\'s `backoff_multiplier`, 2 by default).', parsers.integer(0, 60000)),
  tracingSlowRunMs: variable('DIDYMA_TRACING_SLOW_RUN_MS', '10000', 'A run of an invocation that takes this long or longer is recorded in its trace even when the sampler dropped the trace at the request, as is every run that fails (docs/observability.md); 0 records every run. Only with tracing on.', parsers.integer(0, 3600000)),
  contextMaxInvocations: variable('DIDYMA_CONTEXT_MAX_INVOCATIONS', '50', 'A `need_context` model receives at most this many of the session\'s latest earlier invocations (feedback aside), oldest first, so a call costs the same however long the session grows.', parsers.integer(1, 10000)),
  contextMaxBytes: variable('DIDYMA_CONTEXT_MAX_BYTES', '4194304', 'Byte budget of that context (requests and responses together): older invocations that would go over it are left out, and so is one that is larger by itself.', parsers.integer(1024, 268435456)),
  shutdownDrainSeconds: variable('DIDYMA_SHUTDOWN_DRAIN_SECONDS', '5', 'On SIGTERM, how long a server keeps taking connections while it drains (not ready; every answer closes its connection), unless no connection is left sooner.', parsers.integer(0, 300)),
  shutdownGraceSeconds: variable('DIDYMA_SHUTDOWN_GRACE_SECONDS', '25', 'On SIGTERM, how long requests still running get before their connections are cut, drain included; keep it below the pod\'s termination grace period.', parsers.integer(1, 3600)),
  sweepIntervalMs: variable('DIDYMA_SWEEP_INTERVAL_MS', '1000', 'How often the sweeper returns to the queue the runs whose lease ran out (their executor died).', parsers.integer(10, 60000)),
  executorPollMs: variable('DIDYMA_EXECUTOR_POLL_MS', '1000', 'How long an idle executor waits for a wake-up before it claims anyway: the most a lost wake-up delays queued work.', parsers.integer(10, 60000)),
  executorPort: variable('DIDYMA_EXECUTOR_PORT', '9464', 'Port of the executor\'s /healthz, /readyz and /metrics.', port),
  demoModelServerPort: variable('DIDYMA_DEMO_MODEL_SERVER_PORT', '8090', 'Port of `didyma demo-model-server` (also started by `didyma dev`).', port),
  prometheusUrl: variable('PROMETHEUS_URL', '', 'Base URL of the Prometheus the metric endpoints query (it scrapes every `/metrics`). Empty: metric queries answer 502 "not configured".', parsers.optional(parsers.url(['http:', 'https:']))),
  prometheusTimeoutMs: variable('DIDYMA_PROMETHEUS_TIMEOUT_MS', '10000', 'Timeout of one metric query to Prometheus (also passed to Prometheus as its query timeout).', parsers.integer(1000, 300000)),
  metricsPort: variable('DIDYMA_METRICS_PORT', '', 'When set, the auth, private and public servers of the process serve `/metrics` on this port and not on their API ports, so that a NetworkPolicy can keep scrapes to Prometheus. Empty: on each API port.', parsers.optional(port)),
  metricsToken: variable('DIDYMA_METRICS_TOKEN', '', 'When set, scraping `/metrics` needs `Authorization: Bearer <token>`. Empty: `/metrics` is open (keep it off the public ingress).', parsers.optional(parsers.string)),
  kubeMode: variable('DIDYMA_KUBE_MODE', 'off', 'Kubernetes mode: `in-cluster` (service account of the pod) or `kubeconfig` (file from `KUBECONFIG`). The API then writes ModelDeployment / StorageConfig resources and executors read the operator\'s proxy configuration. `off`: the embedded default, everything from the database.', parsers.oneOf(['off', 'in-cluster', 'kubeconfig'] as const)),
  kubeconfig: variable('KUBECONFIG', '', 'Kubeconfig file of `DIDYMA_KUBE_MODE=kubeconfig` and `DIDYMA_WORKLOAD_TOKEN_REVIEW=kubeconfig` (one path). Empty: `~/.kube/config`. Ignored in the other modes.', parsers.string),
  kubeNamespace: variable('DIDYMA_KUBE_NAMESPACE', '', 'Namespace of the custom resources, their Secrets, the proxy ConfigMaps and the operator Lease. Empty: the pod\'s namespace (in-cluster) or the kubeconfig context\'s (else `default`).', parsers.string),
  kubeCredentialsNamespace: variable(
    'DIDYMA_KUBE_CREDENTIALS_NAMESPACE',
    '',
    'Namespace of the Secrets holding the credentials of deployments and storage configurations: the API writes them, executors and the operator read them. A namespace of their own lets RBAC grant access to them and to nothing else (the chart sets `<release namespace>-credentials`). Empty: the namespace of the custom resources.',
    parsers.optional(parsers.namespace),
  ),
  kserveNamespaces: variable(
    'DIDYMA_KSERVE_NAMESPACES',
    '',
    'Namespaces whose KServe InferenceServices workspaces may discover and call (Kubernetes mode): `namespace=workspace|workspace` entries, or `namespace=*` for every workspace, comma-separated. A deployment of the KServe classes naming any other namespace is refused (400). Empty: none.',
    parsers.namespaceGrants,
  ),
  kubeTimeoutMs: variable('DIDYMA_KUBE_TIMEOUT_MS', '10000', 'Timeout of one Kubernetes API call (the API makes them inside its database transaction).', parsers.integer(500, 120000)),
  kubeResyncSeconds: variable('DIDYMA_KUBE_RESYNC_SECONDS', '300', 'How often the private server repairs drift between the database and the custom resources (0: never).', parsers.integer(0, 86400)),
  proxyConfigMap: variable('DIDYMA_PROXY_CONFIGMAP', 'didyma-proxy-config', 'ConfigMap the operator writes the proxy configuration to and executors read it from.', parsers.string),
  operatorPort: variable('DIDYMA_OPERATOR_PORT', '9465', 'Port of the operator\'s /healthz, /readyz and /metrics.', port),
  operatorProbeSeconds: variable('DIDYMA_OPERATOR_PROBE_SECONDS', '60', 'How often the operator probes the registries and model servers of ready resources.', parsers.integer(5, 86400)),
  operatorSecretGraceSeconds: variable('DIDYMA_OPERATOR_SECRET_GRACE_SECONDS', '600', 'How long the operator keeps a credentials Secret no resource names (a version the private server has just created for its next apply) before deleting it.', parsers.integer(1, 86400)),
  operatorWorkers: variable('DIDYMA_OPERATOR_WORKERS', '2', 'Resources of one kind the operator reconciles at once (each its own probes); a resource is never reconciled by two workers at once.', parsers.integer(1, 64)),
  operatorRetryMs: variable('DIDYMA_OPERATOR_RETRY_MS', '500', 'First delay before the operator retries a resource that failed (unreachable endpoint, missing Secret, API error); it doubles per failure up to DIDYMA_OPERATOR_PROBE_SECONDS.', parsers.integer(50, 600000)),
  leaderElection: variable('DIDYMA_LEADER_ELECTION', 'true', 'Operator replicas elect one leader through a Lease; only the leader reconciles.', parsers.boolean),
  leaseName: variable('DIDYMA_LEASE_NAME', 'didyma-operator', 'Name of the operator\'s leader-election Lease.', parsers.string),
  leaseSeconds: variable('DIDYMA_LEASE_SECONDS', '15', 'Leader lease duration: the leader renews it every fifth of that and stops reconciling when it could not renew for two thirds of it; a standby takes over after a whole one.', parsers.integer(2, 600)),
  smtpUrl: variable('DIDYMA_SMTP_URL', '', 'SMTP server for invitation mail (smtp:// or smtps://, credentials in the URL). Empty: no mail; the inviter passes the link on.', parsers.optional(parsers.url(['smtp:', 'smtps:']))),
  mailFrom: variable('DIDYMA_MAIL_FROM', 'didyma <no-reply@didyma.local>', 'Sender of invitation mail.', parsers.string),
  validateResponses: variable('DIDYMA_VALIDATE_RESPONSES', 'false', 'Check every response against the OpenAPI document (tests turn it on).', parsers.boolean),
} as const;

export type Variables = typeof variables;
export type ConfigValues = { [K in keyof Variables]: ReturnType<Variables[K]['parse']> };
