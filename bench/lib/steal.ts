import fs from 'node:fs';

// Steal time: CPU time the hypervisor gave to someone else while this VM's
// vCPUs had work (/proc/stat, the 8th figure of the `cpu` line). On the bench's
// VM it is the one measure of a disturbed phase that no process here causes:
// a figure taken while the host takes a quarter of the CPU is not this
// platform's figure.

export interface CpuTicks {
  steal: number;
  /** Idle and waiting for I/O. */
  idle: number;
  total: number;
}

/** The machine's `cpu` line: every field summed (guest time is already inside user), steal, and idle. */
export function parseCpuLine(stat: string): CpuTicks {
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('no cpu line in /proc/stat');
  // user nice system idle iowait irq softirq steal [guest guest_nice]
  const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
  return { steal: fields[7] ?? 0, idle: (fields[3] ?? 0) + (fields[4] ?? 0), total: fields.reduce((sum, value) => sum + value, 0) };
}

function readTicks(): CpuTicks | undefined {
  try {
    return parseCpuLine(fs.readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined; // not Linux
  }
}

/** Starts counting; the function returned gives the share of the machine's CPU time stolen since (NaN where unreadable). */
export function stealSince(read: () => CpuTicks | undefined = readTicks): () => number {
  const before = read();
  return () => {
    const after = read();
    if (!before || !after || after.total <= before.total) return NaN;
    return (after.steal - before.steal) / (after.total - before.total);
  };
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Starts counting; the function returned gives the CPU seconds every CPU of the machine together spent busy since, steal left out (NaN where unreadable). */
export function busySince(read: () => CpuTicks | undefined = readTicks): () => number {
  const before = read();
  return () => {
    const after = read();
    if (!before || !after) return NaN;
    const busy = (ticks: CpuTicks) => ticks.total - ticks.idle - ticks.steal;
    return (busy(after) - busy(before)) / TICKS_PER_SECOND;
  };
}

/** Runs `work` and gives its result with the share of the machine's CPU stolen meanwhile. */
export async function withSteal<R>(work: () => Promise<R>): Promise<[R, number]> {
  const stolenSince = stealSince();
  const result = await work();
  return [result, stolenSince()];
}
