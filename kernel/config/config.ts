import { variables, type ConfigValues } from './variables.js';
import { withClientSecrets } from './oidc.js';

export type Config = Readonly<ConfigValues>;

export class ConfigError extends Error {
  constructor(readonly variable: string, reason: string, value: string) {
    super(`Invalid configuration: ${variable}=${JSON.stringify(value)}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads every variable once, validates it and returns a frozen object.
 * A wrong value throws a ConfigError naming the variable; nothing else in the
 * code base reads the environment.
 */
export function loadConfig(env: Env = process.env, overrides: Partial<ConfigValues> = {}): Config {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(variables)) {
    const raw = env[spec.name] ?? spec.default ?? '';
    try {
      values[key] = spec.parse(raw);
    } catch (error) {
      throw new ConfigError(spec.name, (error as Error).message, raw);
    }
  }
  values.oidcConnections = connectionsWithSecrets(values.oidcConnections as ConfigValues['oidcConnections'], env);
  const config = withPasswords({ ...(values as ConfigValues), ...overrides });
  checkRelations(config, env);
  return Object.freeze(config);
}

/** The URLs with the passwords given apart (from a Secret, any characters), where they carry none. */
function withPasswords(config: ConfigValues): ConfigValues {
  return {
    ...config,
    databaseUrl: withPassword(config.databaseUrl, config.databasePassword),
    databaseListenUrl: withPassword(config.databaseListenUrl, config.databasePassword),
    databaseMigrationUrl: withPassword(config.databaseMigrationUrl, config.databaseMigrationPassword),
    amqpUrl: withPassword(config.amqpUrl, config.amqpPassword),
  };
}

/** `url` with `password` percent-encoded into it, unless it has one or there is none to add. */
export function withPassword(url: string | undefined, password: string | undefined): string | undefined {
  if (!url || !password) return url;
  const parsed = new URL(url);
  if (parsed.password) return url;
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** The client secrets of the OpenID connections, read from where each connection says. */
function connectionsWithSecrets(connections: ConfigValues['oidcConnections'], env: Env): ConfigValues['oidcConnections'] {
  try {
    return withClientSecrets(connections, env);
  } catch (error) {
    throw new ConfigError(variables.oidcConnections.name, (error as Error).message, env[variables.oidcConnections.name] ?? '');
  }
}

/** Settings valid alone but not together. */
function checkRelations(config: ConfigValues, env: Env): void {
  if (config.workloadServiceAccounts.length > 0 && config.workloadTokenReview === 'off') {
    const name = variables.workloadServiceAccounts.name;
    throw new ConfigError(name, 'needs DIDYMA_WORKLOAD_TOKEN_REVIEW (in-cluster or kubeconfig) to check the tokens', env[name] ?? '');
  }
  if (config.databasePooler === 'transaction' && config.databaseListen && !config.databaseListenUrl) {
    const name = variables.databasePooler.name;
    throw new ConfigError(name, 'a transaction pooler drops LISTEN between transactions: set DATABASE_LISTEN_URL to a direct connection, or DATABASE_LISTEN=off', env[name] ?? '');
  }
  const perWorkspace = config.webhookMaxInFlightPerWorkspace;
  if (perWorkspace !== undefined && perWorkspace >= config.webhookConcurrency) {
    const name = variables.webhookMaxInFlightPerWorkspace.name;
    throw new ConfigError(name, `must be less than DIDYMA_WEBHOOK_CONCURRENCY (${config.webhookConcurrency}), so one workspace cannot take every slot of a process`, env[name] ?? String(perWorkspace));
  }
}

/**
 * The settings of the commands that change the schema (`migrate`, `admin
 * bootstrap`): the migration user's direct connection, and no LISTEN, which
 * a one-shot command does not need.
 */
export function migrationConfig(config: Config): Config {
  return Object.freeze({ ...config, databaseUrl: config.databaseMigrationUrl ?? config.databaseUrl, databasePooler: 'none', databaseListen: false });
}

/** Webhook deliveries of one workspace in flight at once: the setting, or three quarters of a process's slots. */
export function webhookWorkspaceCap(config: Config): number {
  return config.webhookMaxInFlightPerWorkspace ?? Math.max(1, Math.floor((config.webhookConcurrency * 3) / 4));
}

/** Webhook deliveries of one endpoint in flight at once: half of a process's slots, within its workspace's cap. */
export function webhookEndpointCap(config: Config): number {
  return Math.min(Math.max(1, Math.floor(config.webhookConcurrency / 2)), webhookWorkspaceCap(config));
}

/**
 * The settings of `didyma dev`: development mode, and request lines at
 * `debug` unless DIDYMA_REQUEST_LOG_LEVEL says otherwise, so that the
 * terminal shows the first-start message rather than every request.
 */
export function loadDevConfig(env: Env = process.env): Config {
  const config = loadConfig(env, { devMode: true });
  return Object.freeze({ ...config, requestLogLevel: config.requestLogLevel ?? 'debug' });
}

/** Markdown table of every variable, for docs/configuration.md. */
export function configTable(): string {
  const rows = Object.values(variables).map((v) => `| \`${v.name}\` | ${v.default === '' || v.default === undefined ? '(empty)' : `\`${v.default}\``} | ${v.description} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
