import type { ConfigValues } from '../../kernel/config/variables.js';
import { startTestPlatform, unique, type TestPlatform } from './platform.js';
import { sharedDatabaseUrl } from './database.js';
import { registeredIris, tenant, type Tenant } from './fixtures.js';
import { deleteWorkQueue, requireEnv } from './services.js';
import { countingModelServer, type CountingModelServer, type ManagedProcess } from './model-servers.js';
import { didymaProcess } from './didyma-process.js';
import { databaseUrlOf, InvocationAudit } from './invocation-audit.js';

/**
 * The common ground of the fault tests that run real `didyma` processes: a
 * test platform on its own queue, a tenant with a model on a counting model
 * server, and the audit of every write to that model's invocations.
 */
export class AuditedRun {
  private readonly children: ManagedProcess[] = [];

  private constructor(
    readonly t: TestPlatform,
    readonly owner: Tenant,
    readonly model: CountingModelServer,
    readonly audit: InvocationAudit,
    readonly modelId: number,
    readonly version: string,
    readonly queueName: string,
    readonly amqpUrl: string,
    private readonly databaseUrl: string,
  ) {}

  static async start(prefix: string, modelDelayMs: number, platform: Pick<Partial<ConfigValues>, 'maxInFlight' | 'maxEventStreamsPerUser'> = {}): Promise<AuditedRun> {
    const amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    const databaseUrl = await sharedDatabaseUrl();
    const queueName = unique(`dy-${prefix}`);
    const t = await startTestPlatform({ amqpUrl, queueName, ...platform });
    const version = unique(prefix);
    const model = await countingModelServer(version, modelDelayMs);
    const owner = await tenant(t);
    const modelId = await registeredIris(t, owner, model.url, version);
    const audit = await InvocationAudit.install(t.platform.db, modelId);
    return new AuditedRun(t, owner, model, audit, modelId, version, queueName, amqpUrl, databaseUrl);
  }

  /** The model's path on the public server. */
  base(): string {
    return `/api/model/iris-classifier/version/${this.version}`;
  }

  /** A `didyma` process on this run's broker, whose database writes the audit names `name`. */
  spawn(name: string, args: string[], env: Record<string, string> = {}, queue = this.queueName): ManagedProcess {
    const child = didymaProcess(name, args, { DATABASE_URL: databaseUrlOf(this.databaseUrl, name), DIDYMA_AMQP_URL: this.amqpUrl, DIDYMA_QUEUE_NAME: queue, ...env });
    this.children.push(child);
    return child;
  }

  /** Stops every process it spawned and removes what it made, `queues` included. */
  async close(queues: string[] = []): Promise<void> {
    await Promise.all(this.children.map((child) => child.stop(0)));
    await this.audit.drop();
    await this.model.close();
    await this.t.close();
    for (const queue of [this.queueName, ...queues]) await deleteWorkQueue(this.amqpUrl, queue);
  }
}
