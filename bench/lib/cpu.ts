import fs from 'node:fs';

// CPU time of a process from the kernel (/proc/<pid>/stat: user + system, every
// thread, garbage collector and compiler included). Per request it is a
// steadier figure than requests per second on a VM whose speed drifts.

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuSeconds(pid: number): number {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces: utime is the 12th, stime the 13th.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN; // not Linux, or the process is gone
  }
}

/** Starts counting the CPU of processes `pids`; the function returned gives the seconds each spent since (NaN where unreadable). */
export function cpuSince(pids: Array<number | undefined>): () => number[] {
  const before = pids.map((pid) => (pid ? cpuSeconds(pid) : NaN));
  return () => pids.map((pid, index) => (pid ? cpuSeconds(pid) - before[index]! : NaN));
}

/** Runs `work` and adds the CPU the process `pid` spent meanwhile, in µs per request of the result. */
export async function withCpu<R extends { requests: number }>(pid: number | undefined, work: () => Promise<R>): Promise<R & { cpuUsPerRequest: number }> {
  const spentSince = cpuSince([pid]);
  const result = await work();
  const [spent] = spentSince() as [number];
  return { ...result, cpuUsPerRequest: (spent * 1e6) / result.requests };
}

/** The pids of every process whose `/proc/<pid>/<file>` passes `test` (PostgreSQL's backends come and go). */
function pidsWhere(file: 'comm' | 'cmdline' | 'stat', test: (text: string) => boolean): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return test(fs.readFileSync(`/proc/${pid}/${file}`, 'utf8'));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Starts counting the CPU of the processes `pids()` finds; the function returned gives the seconds they spent since, those started since included. */
function cpuOfFoundSince(pids: () => number[]): () => number {
  const before = new Map(pids().map((pid) => [pid, cpuSeconds(pid)]));
  return () =>
    pids()
      .map((pid) => cpuSeconds(pid) - (before.get(pid) ?? 0))
      .filter(Number.isFinite)
      .reduce((sum, seconds) => sum + seconds, 0);
}

/** The parent pid in a `/proc/<pid>/stat` text (the second field after the command name). */
const parentOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[1]);

/** The parent pid of process `pid`, NaN when unreadable. */
export function parentPid(pid: number): number {
  try {
    return parentOf(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return NaN;
  }
}

/**
 * Starts counting the CPU of every process of the PostgreSQL server whose
 * postmaster is `postmaster`: its backends, and its autovacuum and writers,
 * which a drain's churn keeps busy. Another server on the host does not count.
 */
export function cpuOfServerSince(postmaster: number): () => number {
  return cpuOfFoundSince(() => pidsWhere('stat', (stat) => parentOf(stat) === postmaster));
}

/**
 * Starts counting the CPU of the PostgreSQL backends serving `database`, by
 * their process title (`postgres: <user> <database> <client> <state>`): the
 * server may serve other databases meanwhile, whose work is not the run's.
 */
export function cpuOfDatabaseSince(database: string): () => number {
  return cpuOfFoundSince(() => pidsWhere('cmdline', (title) => title.startsWith('postgres: ') && title.includes(` ${database} `)));
}

/** Starts counting the CPU of every process whose command name (`/proc/<pid>/comm`) is `command`: RabbitMQ's Erlang VM is `beam.smp`. */
export function cpuOfCommandSince(command: string): () => number {
  return cpuOfFoundSince(() => pidsWhere('comm', (comm) => comm.trim() === command));
}

/** Starts counting the CPU of the RabbitMQ node on this host (its Erlang VM, `beam.smp` running `rabbit`). */
export function cpuOfRabbitmqSince(): () => number {
  return cpuOfCommandSince('beam.smp');
}

/** Starts counting this process's own CPU (the load generator's: autocannon and the paced load run in it). */
export function cpuOfSelfSince(): () => number {
  const before = process.cpuUsage();
  return () => {
    const spent = process.cpuUsage(before);
    return (spent.user + spent.system) / 1e6;
  };
}

/** CPU seconds of each process group of a run: the server(s) under load, PostgreSQL, RabbitMQ, the load generator. */
export interface GroupSeconds {
  server: number;
  postgres: number;
  rabbitmq: number;
  load: number;
}

/** Starts counting every group at once: `serverPids` are the processes serving the load, `postmaster` the run's PostgreSQL server. */
export function cpuOfGroupsSince(serverPids: Array<number | undefined>, postmaster: number): () => GroupSeconds {
  const server = cpuSince(serverPids);
  const postgres = cpuOfServerSince(postmaster);
  const rabbitmq = cpuOfRabbitmqSince();
  const load = cpuOfSelfSince();
  return () => ({ server: server().reduce((sum, seconds) => sum + seconds, 0), postgres: postgres(), rabbitmq: rabbitmq(), load: load() });
}

/**
 * The postmaster serving `dataDirectory` now (NaN when none is found): found
 * again whenever a measurement starts, since a PostgreSQL restarted meanwhile
 * has a new one, whose processes the old pid would not find.
 */
export function postmasterOf(dataDirectory: string): number {
  const found = pidsWhere('cmdline', (args) => {
    const words = args.split('\0');
    return /(^|\/)postgres$/.test(words[0] ?? '') && words.some((word, index) => word === dataDirectory && words[index - 1] === '-D');
  });
  return found[0] ?? NaN;
}
