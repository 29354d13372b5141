import { expect } from 'chai';
import { createLogger } from '../../infra/logging/logger.js';
import { Scheduler } from '../../infra/process/scheduler.js';
import { until } from '../../test/support/until.js';
import { BackgroundTaskMetrics } from './background-metrics.js';

/** The value of one series in the exposition text, or undefined when it is not there. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('background task metrics', () => {
  it('count each task’s runs, failures and run time by name, from 0 as soon as the task starts', async () => {
    const metrics = new BackgroundTaskMetrics();
    const scheduler = new Scheduler(createLogger('silent'), metrics);
    let flakyRuns = 0;
    let steadyRuns = 0;
    const steady = scheduler.add({ name: 'invocation_sweeper', intervalMs: 3_600_000, run: async () => void (steadyRuns += 1) });
    const flaky = scheduler.add({
      name: 'audit_record_purge',
      intervalMs: 5,
      run: async () => {
        flakyRuns += 1;
        if (flakyRuns === 1) throw new Error('the database went away');
      },
    });
    const idle = scheduler.add({ name: 'webhook_delivery_purge', intervalMs: 3_600_000, run: async () => undefined });
    steady.start();
    flaky.start();
    await until(async () => steadyRuns === 1 && flakyRuns >= 2, 'the runs');
    await scheduler.stop();

    const text = await metrics.registry.metrics();
    expect(valueOf(text, 'didyma_background_task_runs_total{task="invocation_sweeper"}')).to.equal(1);
    expect(valueOf(text, 'didyma_background_task_failures_total{task="invocation_sweeper"}'), 'a started task shows its 0').to.equal(0);
    expect(valueOf(text, 'didyma_background_task_runs_total{task="audit_record_purge"}')).to.equal(flakyRuns);
    expect(valueOf(text, 'didyma_background_task_failures_total{task="audit_record_purge"}')).to.equal(1);
    expect(valueOf(text, 'didyma_background_task_duration_seconds_count{task="audit_record_purge"}')).to.equal(flakyRuns);
    expect(valueOf(text, 'didyma_background_task_duration_seconds_count{task="invocation_sweeper"}')).to.equal(1);
    expect(text, 'a task never started').not.to.include(idle.name);
  });
});
