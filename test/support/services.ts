import { execFileSync } from 'node:child_process';
import path from 'node:path';
import amqp from 'amqplib';
import { wakeupQueueOf } from '../../infra/queue/rabbitmq.js';

/** An environment variable a test needs, or a failure saying how to get it (never a silent skip). */
export function requireEnv(name: string, service: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: start ${service} with \`bash scripts/services/${service}.sh start\` and export \`bash scripts/services/${service}.sh env\` (make test does both).`);
  return value;
}

/** Runs a service script (start, stop, restart) synchronously. */
export function serviceScript(service: string, action: 'start' | 'stop' | 'restart'): void {
  execFileSync('bash', [path.resolve('scripts/services', `${service}.sh`), action], { stdio: 'ignore', timeout: 120_000 });
}

/**
 * Stops a test's own instance of a service, kept under its own state directory
 * (`DIDYMA_SERVICES_DIR`) with its own port variables: the shared one runs on.
 */
export function stopOwnInstance(service: string, stateDir: string, env: Record<string, string>): void {
  execFileSync('bash', [path.resolve('scripts/services', `${service}.sh`), 'stop'], { env: { ...process.env, ...env, DIDYMA_SERVICES_DIR: stateDir }, stdio: 'ignore', timeout: 120_000 });
}

/**
 * Deletes the wake-up queue a test or the bench declared (and, by the
 * configured name, the quorum queues of earlier versions): the broker
 * outlives a run on a developer's machine.
 */
export async function deleteWorkQueue(url: string, queue: string): Promise<void> {
  const connection = await amqp.connect(url).catch(() => undefined);
  if (!connection) return;
  try {
    const channel = await connection.createChannel();
    for (const name of [wakeupQueueOf(queue), queue, `${queue}.dead`]) await channel.deleteQueue(name).catch(() => undefined);
  } finally {
    await connection.close().catch(() => undefined);
  }
}
