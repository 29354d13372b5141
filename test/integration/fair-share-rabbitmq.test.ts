import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { quietDuringFlood } from '../support/flood.js';

describe('fair share over RabbitMQ with two executors: a quiet workspace is served during another’s flood', function () {
  this.timeout(180_000);
  let t: TestPlatform;
  let queueName: string;
  const executors: Array<Awaited<ReturnType<typeof startExecutor>>> = [];

  before(async () => {
    queueName = unique('dy-fair');
    t = await startTestPlatform({ amqpUrl: requireEnv('TEST_AMQP_URL', 'rabbitmq'), queueName, executorConcurrency: 2 });
    // Two consumers of one queue, as two executor replicas are: the flood's messages reach both.
    executors.push(await startExecutor(t.platform), await startExecutor(t.platform));
  });
  after(async () => {
    for (const executor of executors) await executor.close();
    await t?.close();
    if (queueName) await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queueName);
  });

  it('runs the quiet workspace’s prediction long before the flooding workspace’s backlog drains', async () => {
    const { noisyQueued } = await quietDuringFlood(t, 300, 100);
    expect(noisyQueued, 'the flooding workspace’s predictions still queued when the quiet one’s completed').to.be.greaterThan(150);
  });
});
