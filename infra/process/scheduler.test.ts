import { expect } from 'chai';
import { pino } from 'pino';
import { until } from '../../test/support/until.js';
import { Scheduler, backoffMs, type TaskDefinition } from './scheduler.js';

const HOUR = 3_600_000;

/** A scheduler whose warnings are kept as parsed log lines. */
function scheduler() {
  const warnings: Array<{ msg: string; task: string; failures: number; retryInMs: number }> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  return { scheduler: new Scheduler(logger), warnings };
}

/** A gate runs wait on until it opens. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Lets every wake-up already scheduled (each on its own setImmediate) run first: a run starts synchronously in its turn. */
async function turns(count = 3): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A task that counts its runs and how many ran at once, each run waiting on `held` when given. */
function counted(name: string, intervalMs: number, held?: Promise<void>, extra: Partial<TaskDefinition> = {}) {
  const stats = { runs: 0, active: 0, mostAtOnce: 0 };
  const definition: TaskDefinition = {
    name,
    intervalMs,
    run: async () => {
      stats.runs += 1;
      stats.active += 1;
      stats.mostAtOnce = Math.max(stats.mostAtOnce, stats.active);
      try {
        await held;
      } finally {
        stats.active -= 1;
      }
    },
    ...extra,
  };
  return { stats, definition };
}

describe('Scheduler', () => {
  it('runs a task once started, then again one interval after each run ends', async () => {
    const { scheduler: s } = scheduler();
    const { stats, definition } = counted('poll', 10);
    const task = s.add(definition);
    await turns();
    expect(stats.runs, 'runs before start').to.equal(0);
    task.start();
    await until(async () => stats.runs >= 3, 'three runs');
    await s.stop();
  });

  it('never runs a task twice at once: wake-ups during a run make one more run after it', async () => {
    const { scheduler: s } = scheduler();
    const { opened, open } = gate();
    const { stats, definition } = counted('relay', HOUR, opened);
    const task = s.add(definition);
    task.start();
    await until(async () => stats.active === 1, 'the first run');
    for (let i = 0; i < 5; i++) s.wake('relay');
    await turns();
    expect(stats.runs, 'runs while the first is held').to.equal(1);
    open();
    await until(async () => stats.runs === 2 && stats.active === 0, 'the run the wake-ups asked for');
    await turns();
    await task.stop();
    expect(stats).to.deep.equal({ runs: 2, active: 0, mostAtOnce: 1 });
  });

  it('runs a task at once when woken, instead of at its interval', async () => {
    const { scheduler: s } = scheduler();
    const { stats, definition } = counted('deliverer', HOUR);
    s.add(definition).start();
    await until(async () => stats.runs === 1, 'the first run');
    s.wake('deliverer');
    await until(async () => stats.runs === 2, 'the run the wake-up asked for');
    await s.stop();
  });

  it('backs off after failures in a row, doubling the interval up to the cap, and a success starts again from the interval', async () => {
    const { scheduler: s, warnings } = scheduler();
    // Five failures, a success, one more failure, then successes.
    const outcomes = [false, false, false, false, false, true, false];
    let run = 0;
    const task = s.add({
      name: 'sweeper',
      intervalMs: 10,
      maxBackoffMs: 80,
      run: async () => {
        if (!(outcomes[run++] ?? true)) throw new Error(`failure ${run}`);
      },
    });
    task.start();
    await until(async () => run > outcomes.length, 'the runs after the last failure');
    await s.stop();
    expect(warnings.map(({ retryInMs }) => retryInMs)).to.deep.equal([20, 40, 80, 80, 80, 20]);
    expect(warnings.map(({ failures }) => failures)).to.deep.equal([1, 2, 3, 4, 5, 1]);
    expect(warnings[0]).to.include({ task: 'sweeper', msg: 'a background task failed; it runs again after a backoff' });
    expect(task.failures).to.equal(0);
  });

  it('never backs off to less than the interval: a slow task keeps its pace when it fails', () => {
    expect(backoffMs(1_000, 0)).to.equal(1_000);
    expect(backoffMs(1_000, 1)).to.equal(2_000);
    expect(backoffMs(1_000, 50)).to.equal(10_000);
    expect(backoffMs(300_000, 3)).to.equal(300_000);
  });

  it('ignores wake-ups while a task backs off: a dependency that is down is not asked again per wake-up', async () => {
    const { scheduler: s } = scheduler();
    let runs = 0;
    const task = s.add({
      name: 'relay',
      intervalMs: HOUR,
      run: async () => {
        runs += 1;
        throw new Error('broker down');
      },
    });
    task.start();
    await until(async () => task.failures === 1, 'the failed run');
    for (let i = 0; i < 5; i++) task.wake();
    await turns();
    expect(runs).to.equal(1);
    await s.stop();
  });

  it('keeps tasks apart: one held in a run does not hold another', async () => {
    const { scheduler: s } = scheduler();
    const { opened, open } = gate();
    const held = counted('purge', 10, opened);
    const free = counted('sweeper', 10);
    s.add(held.definition).start();
    s.add(free.definition).start();
    await until(async () => free.stats.runs >= 3, 'runs of the free task');
    expect(held.stats).to.include({ runs: 1, active: 1 });
    open();
    await s.stop();
  });

  it('stop waits for the run in progress and what it left behind, and no run starts after it', async () => {
    const { scheduler: s } = scheduler();
    const { opened, open } = gate();
    let leftBehind = 'pending';
    const { stats, definition } = counted('deliverer', 10, opened, {
      afterStop: async () => {
        await turns();
        leftBehind = 'recorded';
      },
    });
    const task = s.add(definition);
    task.start();
    await until(async () => stats.active === 1, 'the run');
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    await turns();
    expect(stopped, 'stopped while a run is in progress').to.equal(false);
    open();
    await stopping;
    expect({ active: stats.active, leftBehind }).to.deep.equal({ active: 0, leftBehind: 'recorded' });
    task.wake();
    await turns();
    expect(stats.runs).to.equal(1);
  });

  it('tells a long run that it is stopping, so it can end between its steps', async () => {
    const { scheduler: s } = scheduler();
    let steps = 0;
    const task = s.add({
      name: 'relay',
      intervalMs: HOUR,
      run: async (stopping) => {
        while (!stopping.aborted) {
          steps += 1;
          await turns(1);
        }
      },
    });
    task.start();
    await until(async () => steps > 0, 'the run');
    await task.stop();
    // Started again, the task runs with a fresh signal.
    const before = steps;
    task.start();
    await until(async () => steps > before + 2, 'the next run');
    await task.stop();
  });

  it('registers each name once, and wakes only a task it knows', () => {
    const { scheduler: s } = scheduler();
    s.add({ name: 'purge', intervalMs: HOUR, run: async () => undefined });
    expect(() => s.add({ name: 'purge', intervalMs: HOUR, run: async () => undefined })).to.throw('a background task named purge is registered already');
    expect(() => s.wake('other')).to.throw('no background task named other');
    expect(s.tasks().map((task) => task.name)).to.deep.equal(['purge']);
  });
});
