import { Command, InvalidArgumentError, Option } from 'commander';
import { configTable, loadConfig, loadDevConfig, migrationConfig, type Config } from '../kernel/config/config.js';
import { grantRuntimeRole, migrateLatest } from '../infra/db/database.js';
import { createPlatform, type Platform } from '../platform/platform.js';
import { addMember, bootstrap, createUser, createWorkspace, generatePassword, resetPassword } from '../features/identity/admin.js';
import { workspacesStore } from '../features/identity/workspaces.store.js';
import { NotFoundError } from '../kernel/errors/errors.js';
import type { Role } from '../features/auth/principal.js';
import { startServers, type ServerName } from './servers.js';
import { formerDataDirNotice } from './former-data-dir.js';
import { firstLineOfStandardInput } from './standard-input.js';
import { describeBootstrap, welcomeText } from './welcome.js';
import { startExecutor } from '../executor/start.js';
import { createDemoModelServer } from '../demo/model-server/server.js';
import { createLogger, type Logger } from '../infra/logging/logger.js';
import type { ClosingSteps } from '../infra/process/closing.js';
import { keepUnrecordedRuns } from '../infra/telemetry/kept-runs.js';
import { failedOrSlowerThan } from '../features/invocations/trace-attributes.js';

/** Entry point of the `didyma` command (bin/didyma.js). */
export async function main(argv: string[]): Promise<void> {
  const program = new Command('didyma').description('Multi-tenant control plane for serving machine-learning models.').showHelpAfterError();

  program
    .command('serve')
    .description('Run HTTP servers')
    .addArgument(new Command().createArgument('<server>', 'auth | private | public | all').choices(['auth', 'private', 'public', 'all']))
    .action(async (server: string) => {
      const names: ServerName[] = server === 'all' ? ['auth', 'private', 'public'] : [server as ServerName];
      await runUntilSignal(loadConfig(), (platform) => {
        // The public server queues invocations: it publishes them and sweeps lost runs back (auth and private queue none).
        if (names.includes('public')) platform.start();
        return startServers(platform, names);
      });
    });

  program
    .command('executor')
    .description('Run queued invocations (RabbitMQ when DIDYMA_AMQP_URL is set)')
    .action(async () => {
      await runUntilSignal(loadConfig(), async (platform) => {
        // Executors queue explanations and hold leases: each publishes and sweeps too, so no lost run waits for a public server.
        platform.start();
        const executor = await startExecutor(platform, { healthPort: platform.config.executorPort });
        return [{ name: 'executor', close: () => executor.close() }];
      });
    });

  program
    .command('demo-model-server')
    .description('A small Open Inference Protocol server with an Iris classifier and its explainer')
    .option('--port <port>', 'port', (v) => Number(v))
    .option('--version <version>', 'serve every model under this version instead of 1')
    .option('--delay-ms <ms>', 'make each inference take at least this long', milliseconds)
    .action(async (options: { port?: number; version?: string; delayMs?: number }) => {
      const config = loadConfig();
      const server = createDemoModelServer({ version: options.version, inferenceDelayMs: options.delayMs });
      const { url } = await server.listen(options.port ?? config.demoModelServerPort, config.bindHost);
      const version = options.version ?? '1';
      console.log(`demo model server on ${url} (models: iris-classifier ${version}, iris-explainer ${version}, always-fails ${version})`);
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', () => resolve());
        process.once('SIGINT', () => resolve());
      });
      await server.close();
    });

  program
    .command('migrate')
    .description('Apply database migrations')
    .action(() =>
      withPlatform(migrationConfig(loadConfig()), async (p) => {
        let told = false;
        const onLocked = () => {
          if (!told) console.log('another run holds the migration lock: waiting for it to finish');
          told = true;
        };
        console.log(`migrations applied: ${(await migrateLatest(p.db, { onLocked })).join(', ') || 'none (up to date)'}`);
        if (p.config.databaseRuntimeRole) {
          await grantRuntimeRole(p.db, p.config.databaseRuntimeRole);
          console.log(`rows and sequences granted to ${p.config.databaseRuntimeRole}`);
        }
      }),
    );

  program
    .command('dev')
    .description('Everything on one machine with embedded defaults (PGlite, in-process queue, filesystem storage)')
    .action(async () => {
      const config = loadDevConfig();
      const notice = formerDataDirNotice(config.dataDir);
      if (notice) throw new Error(notice);
      await runUntilSignal(config, async (platform) => {
        await migrateLatest(platform.db);
        const result = await bootstrap(platform.db, config.adminEmail, config.adminPassword);
        // One relay and one sweeper for the public server and the executor this process runs.
        platform.start();
        const servers = await startServers(platform, ['auth', 'private', 'public']);
        const executor = await startExecutor(platform, { healthPort: config.executorPort });
        const demo = createDemoModelServer();
        const { url: demoUrl } = await demo.listen(config.demoModelServerPort, config.bindHost);
        // The start-up lines are written out first, so that nothing logged before it comes after the welcome.
        await new Promise<void>((resolve) => platform.logger.flush(() => resolve()));
        console.log(welcomeText(config, servers, result, demoUrl));
        return [...servers, { name: 'executor', close: () => executor.close() }, { name: 'demo model server', close: () => demo.close() }];
      });
    });

  program
    .command('operator')
    .description('Reconcile ModelDeployment and StorageConfig resources into the proxy configuration (needs DIDYMA_KUBE_MODE)')
    .option('--release-finalizers', "take the operator's finalizer off every resource and exit (once the operator is uninstalled)")
    .action(async (options: { releaseFinalizers?: boolean }) => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel);
      if (options.releaseFinalizers) {
        const { releaseFinalizers } = await import('../operator/release.js');
        await releaseFinalizers(config, logger);
        return;
      }
      // Imported here: the operator loads the Kubernetes client library (about 70 MiB), which no other command needs.
      const { startOperator } = await import('../operator/start.js');
      const operator = await startOperator(config, logger);
      await untilSignal(logger);
      exitAtGraceDeadline(logger, config.shutdownGraceSeconds);
      await operator.close();
    });

  program.command('config-table').description('Print the environment variables as a Markdown table').action(() => console.log(configTable()));

  const admin = program.command('admin').description('Administration of users and workspaces');
  admin
    .command('bootstrap')
    .description('Create the first staff user and the workspace "default" when no staff user exists')
    .action(() =>
      withPlatform(migrationConfig(loadConfig()), async (p) => {
        await migrateLatest(p.db);
        const result = await bootstrap(p.db, p.config.adminEmail, p.config.adminPassword);
        console.log(result.created ? describeBootstrap(result) : 'A staff user already exists; nothing to do.');
      }),
    );
  admin
    .command('create-user')
    .description('Create a user (password from --password or DIDYMA_NEW_USER_PASSWORD)')
    .requiredOption('--email <email>')
    .option('--password <password>')
    .option('--staff', 'platform-wide staff user', false)
    .action((options: { email: string; password?: string; staff: boolean }) =>
      withPlatform(loadConfig(), async (p) => {
        const password = options.password ?? process.env.DIDYMA_NEW_USER_PASSWORD;
        if (!password) throw new Error('Give --password or DIDYMA_NEW_USER_PASSWORD.');
        const user = await createUser(p.db, { email: options.email, password, staff: options.staff });
        console.log(`user ${user.email} created (id ${user.id}${user.is_staff ? ', staff' : ''})`);
      }),
    );
  admin
    .command('reset-password <email>')
    .description("Give a user a new password, generated and printed, and end the user's sign-ins")
    .option('--password-stdin', 'take the new password from the first line of standard input instead')
    .action(async (email: string, options: { passwordStdin?: boolean }) => {
      const given = options.passwordStdin ? await firstLineOfStandardInput() : undefined;
      const password = given ?? generatePassword();
      await withPlatform(loadConfig(), async (p) => {
        const { email: user, signedOut } = await resetPassword(p.db, email, password);
        const what = given ? 'password changed' : `new password ${password}  (generated: shown only now)`;
        console.log(`${user}: ${what}; ${signedOut} sign-in${signedOut === 1 ? '' : 's'} ended`);
      });
    });
  admin
    .command('create-workspace <name>')
    .description('Create a workspace')
    .action((name: string) =>
      withPlatform(loadConfig(), async (p) => {
        const workspace = await createWorkspace(p.db, name);
        console.log(`workspace ${workspace.name} created (id ${workspace.id})`);
      }),
    );
  admin
    .command('add-member')
    .description('Add a user to a workspace, or change their role')
    .requiredOption('--email <email>')
    .requiredOption('--workspace <name>')
    .addOption(new Option('--role <role>').choices(['user', 'supervisor']).default('user'))
    .action((options: { email: string; workspace: string; role: Role }) =>
      withPlatform(loadConfig(), async (p) => {
        await addMember(p.db, options.email, options.workspace, options.role);
        console.log(`${options.email} is ${options.role} of ${options.workspace}`);
      }),
    );
  admin
    .command('create-oauth-app')
    .description('Create an OAuth application (client credentials) in a workspace; the secret is printed once')
    .requiredOption('--workspace <name>')
    .requiredOption('--name <name>')
    .addOption(new Option('--role <role>').choices(['user', 'supervisor']).default('user'))
    .action((options: { workspace: string; name: string; role: Role }) =>
      withPlatform(loadConfig(), async (p) => {
        const workspace = await workspacesStore.liveByName(p.db, options.workspace);
        if (!workspace) throw new NotFoundError(`No workspace ${options.workspace}.`);
        const app = await p.identity.oauth.create(null, workspace.id, { name: options.name, role: options.role });
        console.log(JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret, workspace: workspace.name }, null, 2));
      }),
    );

  await program.parseAsync(argv);
}

/** A whole number of milliseconds, so a typo fails at start rather than serving without the delay. */
function milliseconds(value: string): number {
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidArgumentError('a whole number of milliseconds, 0 or more.');
  return ms;
}

async function withPlatform(config: Config, work: (platform: Platform) => Promise<void>): Promise<void> {
  const platform = createPlatform(config);
  try {
    await work(platform);
  } finally {
    await platform.close();
  }
}

interface Closable {
  /** What the shutdown log names it, should it still be closing when the grace period runs out. */
  name: string;
  close(): Promise<void>;
}

/** Starts long-running parts and stops them cleanly on SIGTERM / SIGINT. */
async function runUntilSignal(config: Config, start: (platform: Platform) => Promise<Closable[]>): Promise<void> {
  // The runs this process records whatever their trace's sampler decided (docs/observability.md).
  keepUnrecordedRuns(failedOrSlowerThan(config.tracingSlowRunMs));
  const platform = createPlatform(config);
  let parts: Closable[];
  try {
    parts = await start(platform);
  } catch (error) {
    await platform.close();
    throw error;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      platform.logger.info({ signal }, 'shutting down');
      platform.shutdown.draining = true;
      exitAtGraceDeadline(platform.logger, config.shutdownGraceSeconds, platform.shutdown.closing);
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  const { closing } = platform.shutdown;
  const closed = await Promise.allSettled(parts.map((part) => closing.run(part.name, () => part.close())));
  closed.forEach((result, i) => {
    if (result.status === 'rejected') platform.logger.error({ err: result.reason, step: parts[i]!.name }, 'could not close a part of the process');
  });
  await platform.close();
}

/**
 * Ends the process when the grace period is over, whatever is still open
 * (a model call that never returns, a peer that keeps a socket open), so it
 * goes before the orchestrator kills it; unref'd, it never keeps the process alive.
 */
function exitAtGraceDeadline(logger: Logger, graceSeconds: number, closing?: ClosingSteps): void {
  const timer = setTimeout(() => {
    // The resources still holding the event loop name what did not close when every step did.
    logger.error({ graceSeconds, open: closing?.pending(), resources: process.getActiveResourcesInfo() }, 'shutdown grace period over: exiting with work still open');
    process.exit(1);
  }, graceSeconds * 1000);
  timer.unref();
}

/** Resolves on SIGTERM or SIGINT (for processes without a platform, like the operator). */
function untilSignal(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
