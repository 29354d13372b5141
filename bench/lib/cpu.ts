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

/** The pids of every process whose command name is `name` (PostgreSQL's backends come and go). */
function pidsNamed(name: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Starts counting the CPU of every process named `name`; the function returned gives the seconds they spent since, those started since included. */
export function cpuOfNamedSince(name: string): () => number {
  const before = new Map(pidsNamed(name).map((pid) => [pid, cpuSeconds(pid)]));
  return () =>
    pidsNamed(name)
      .map((pid) => cpuSeconds(pid) - (before.get(pid) ?? 0))
      .filter(Number.isFinite)
      .reduce((sum, seconds) => sum + seconds, 0);
}
