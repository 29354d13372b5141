import { startExecutor } from '../../executor/start.js';
import { sharedDatabaseUrl } from './database.js';
import { didymaProcess } from './didyma-process.js';
import { freePorts, type ManagedProcess } from './model-servers.js';
import { startTestPlatform, unique, type TestPlatform } from './platform.js';
import { deleteWorkQueue, requireEnv } from './services.js';

/**
 * A platform on PostgreSQL and RabbitMQ with an executor in this process, and
 * a public server in a process of its own on the same database and queue, as
 * in production: `env` adds the server's settings.
 */
export async function startPublicProcess(queuePrefix: string, env: Record<string, string>, options: { executorConcurrency?: number } = {}) {
  const amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
  const queueName = unique(queuePrefix);
  const t: TestPlatform = await startTestPlatform({ amqpUrl, queueName, ...options });
  const executor = await startExecutor(t.platform);
  const [port] = await freePorts(1);
  const server: ManagedProcess = didymaProcess('public', ['serve', 'public'], {
    DATABASE_URL: await sharedDatabaseUrl(),
    DIDYMA_AMQP_URL: amqpUrl,
    DIDYMA_QUEUE_NAME: queueName,
    DIDYMA_PUBLIC_PORT: String(port),
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    t,
    server,
    url,
    /** Stops the server, the executor and the platform, and deletes the queue. */
    async close() {
      await server.stop(0);
      await executor.close();
      await t.close();
      await deleteWorkQueue(amqpUrl, queueName);
    },
  };
}

export type PublicProcess = Awaited<ReturnType<typeof startPublicProcess>>;
