// The figures of `make bench-scale-out` (bench/scale-out.ts): how fast 1, 2,
// 4… executor processes drain one backlog, where adding executors stops
// paying (the knee), what bounds the drain there, and what the figures at the
// knee ask of PostgreSQL for a larger fleet. Pure computations only.

/** Cumulative counters read at one moment (`at`, epoch ms of the database's clock). */
export interface Sample<K extends string> {
  at: number;
  values: Record<K, number>;
}

/**
 * CPU seconds of each process group, cumulative: `database` is the backends
 * of the run's database, `postgres` every process of its server (other
 * databases' included), `broker` RabbitMQ, `bench` the bench's own process
 * (its sampling), `host` every busy CPU of the machine.
 */
export type CpuGroup = 'executors' | 'database' | 'postgres' | 'model' | 'servers' | 'broker' | 'bench' | 'host';
export const CPU_GROUPS: readonly CpuGroup[] = ['executors', 'database', 'postgres', 'model', 'servers', 'broker', 'bench', 'host'];

export interface Window {
  /** Epoch ms of the database's clock. */
  from: number;
  to: number;
  completed: number;
  /** completed / (to − from), per second. */
  rps: number;
}

/** Share of the completions left out at each end: the executors' start-up and JIT before, the last stragglers after. */
export const STEADY_TRIM = 0.1;

/**
 * The steady part of a drain from its completion times (epoch ms, any order):
 * the completions between the `trim` and 1 − `trim` quantiles, and none
 * before `notBefore` (when the last executor was ready), per second of the
 * time between them.
 */
export function steadyWindow(completedMs: number[], notBefore = -Infinity, trim = STEADY_TRIM): Window {
  const sorted = [...completedMs].sort((a, b) => a - b);
  let first = Math.floor(sorted.length * trim);
  while (first < sorted.length && sorted[first]! < notBefore) first++;
  const last = Math.ceil(sorted.length * (1 - trim)) - 1;
  if (last <= first) return { from: NaN, to: NaN, completed: 0, rps: NaN };
  const [from, to] = [sorted[first]!, sorted[last]!];
  // The completions strictly after the first one in the window: those the time between them bought.
  const completed = last - first;
  return { from, to, completed, rps: to > from ? (completed * 1000) / (to - from) : NaN };
}

/**
 * What the counters grew by over `[from, to]`, and the seconds between the
 * samples that bracket it: the last taken at or before `from` and the first
 * at or after `to` (the nearest ones when none brackets it).
 */
export function deltaOver<K extends string>(samples: Array<Sample<K>>, from: number, to: number): { seconds: number; values: Record<K, number> } | undefined {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  const start = sorted.filter((sample) => sample.at <= from).at(-1) ?? sorted[0];
  const end = sorted.find((sample) => sample.at >= to) ?? sorted.at(-1);
  if (!start || !end || end.at <= start.at) return undefined;
  const values = Object.fromEntries(Object.keys(end.values).map((key) => [key, end.values[key as K] - start.values[key as K]])) as Record<K, number>;
  return { seconds: (end.at - start.at) / 1000, values };
}

/** Connections of the run's database in one reading of pg_stat_activity: all of them, and the executors' (by their application_name). */
export interface Connections {
  total: number;
  executors: number;
  /** The executors' running a statement, or inside a transaction between two. */
  executorsActive: number;
}

export interface ConnectionFigures {
  /** The most seen at once during the drain: all of them (the API servers' pools and listeners too), and the executors'. */
  peak: number;
  executors: number;
  /** The executors' connections busy (in a statement or a transaction): the most at once, and the mean over the readings. */
  peakActive: number;
  meanActive: number;
}

export function connectionFigures(during: Connections[]): ConnectionFigures {
  const actives = during.map((reading) => reading.executorsActive);
  return {
    peak: Math.max(0, ...during.map((reading) => reading.total)),
    executors: Math.max(0, ...during.map((reading) => reading.executors)),
    peakActive: Math.max(0, ...actives),
    meanActive: actives.length ? round(actives.reduce((sum, n) => sum + n, 0) / actives.length, 2) : NaN,
  };
}

export interface ScaleOutRow {
  executors: number;
  queued: number;
  completed: number;
  failed: number;
  /** The most frequent errors of the failed ones. */
  errors?: Array<{ error: string; count: number }>;
  /** First claim → last completion. */
  whole: { seconds: number; rps: number };
  steady: Window;
  /** Claim statements (one transaction each, however many rows) and completion statements per second of the steady window, and rows per claim. */
  claimsPerSecond: number;
  rowsPerClaim: number;
  completionWritesPerSecond: number;
  /** CPU of each group over the steady window: cores busy, and µs per completed invocation. */
  cores: Record<CpuGroup, number>;
  cpuUsPerInvocation: Record<CpuGroup, number>;
  connections: ConnectionFigures;
  /** Model calls in flight on average (Little's law: rate × call time), and the slots the executors have for them. */
  modelCallsInFlight: number;
  slots: number;
  bound: string;
}

/** The CPU figures of a steady window from the counters' growth over it. */
export function cpuFigures(delta: { seconds: number; values: Record<CpuGroup, number> }, completed: number) {
  const per = (f: (seconds: number) => number) => Object.fromEntries(CPU_GROUPS.map((group) => [group, f(delta.values[group])])) as Record<CpuGroup, number>;
  return { cores: per((seconds) => round(seconds / delta.seconds, 2)), cpuUsPerInvocation: per((seconds) => Math.round((seconds * 1e6) / completed)) };
}

/** The slots are this full or more: the drain runs at the model server's pace. */
export const SLOTS_FULL = 0.8;
/** The machine's CPUs are this busy or more: the drain runs at the CPU's pace. */
export const HOST_FULL = 0.9;

/**
 * What held the drain back, in one phrase: the model calls (every slot busy:
 * adding executors adds calls), the machine's CPU (and which group took most
 * of it), the database's connections, or none of these (round trips: each
 * executor waits on its own claims and completions).
 */
export function boundOf(row: Pick<ScaleOutRow, 'modelCallsInFlight' | 'slots' | 'cores' | 'connections'>, machine: { cpus: number; poolMax: number; executors: number }): string {
  const slotsUsed = row.modelCallsInFlight / row.slots;
  if (slotsUsed >= SLOTS_FULL) return `the model calls (${pct(slotsUsed)} of ${row.slots} slots busy)`;
  if (row.cores.host >= HOST_FULL * machine.cpus) {
    const groups: Array<[string, number]> = [
      ['PostgreSQL', row.cores.postgres],
      ['the executors', row.cores.executors],
      ['the model server', row.cores.model],
      ['the API servers', row.cores.servers],
      ['RabbitMQ', row.cores.broker],
      ['the bench itself', row.cores.bench],
      ['the rest of the host', row.cores.host - row.cores.postgres - row.cores.executors - row.cores.model - row.cores.servers - row.cores.broker - row.cores.bench],
    ];
    const [name, cores] = groups.reduce((top, group) => (group[1] > top[1] ? group : top));
    return `the host's CPU (${row.cores.host} of ${machine.cpus} cores busy; most: ${name}, ${round(cores, 2)})`;
  }
  const pool = machine.poolMax * machine.executors;
  if (row.connections.peakActive >= pool) return `the connections (${row.connections.peakActive} active of ${pool} in the executors' pools)`;
  return `round trips (${pct(slotsUsed)} of the slots busy, CPU and connections to spare)`;
}

/** Adding executors beyond the knee raises the drain by less than this share. */
export const KNEE_GAIN = 0.1;

/**
 * The knee: the fewest executors after which the next count drains less than
 * KNEE_GAIN faster (steady rate). Not reached when every step gained more:
 * the most executors measured, then.
 */
export function kneeOf<R extends Pick<ScaleOutRow, 'executors' | 'steady'>>(rows: R[]): { row: R; reached: boolean } | undefined {
  const sorted = [...rows].sort((a, b) => a.executors - b.executors);
  for (let i = 0; i + 1 < sorted.length; i++) {
    if (sorted[i + 1]!.steady.rps < sorted[i]!.steady.rps * (1 + KNEE_GAIN)) return { row: sorted[i]!, reached: true };
  }
  const last = sorted.at(-1);
  return last && { row: last, reached: false };
}

export interface Fleet {
  executors: number;
  /** Invocations per second the fleet drains. */
  rate: number;
  poolMax: number;
}

export interface Projection {
  claimsPerSecond: number;
  /** One row per claim: the most claims the rate can take, when each executor's claims gather no more than one run. */
  claimsPerSecondAtMost: number;
  completionWritesPerSecond: number;
  /** PostgreSQL's CPU for the drain alone (its backends for the run's database), cores. */
  databaseCores: number;
  /**
   * The executors' connections: as many as each held (measured) or may hold
   * (its pool and its change-feed listener), and how many are busy at once at
   * the fleet's rate (the mean busy, per invocation a second): what a
   * transaction pooler's server side needs.
   */
  connections: { measured: number; pools: number; busy: number };
}

/**
 * What `fleet` asks of PostgreSQL, on paper, from one measured row: its
 * statements and CPU per invocation times the fleet's rate, and the
 * connections each executor held (measured) or may hold (its pool and its
 * change-feed listener).
 */
export function projectTo(row: ScaleOutRow, fleet: Fleet): Projection {
  const perInvocation = (perSecond: number) => perSecond / row.steady.rps;
  return {
    claimsPerSecond: Math.round(perInvocation(row.claimsPerSecond) * fleet.rate),
    claimsPerSecondAtMost: fleet.rate,
    completionWritesPerSecond: Math.round(perInvocation(row.completionWritesPerSecond) * fleet.rate),
    databaseCores: round((row.cpuUsPerInvocation.database * fleet.rate) / 1e6, 1),
    connections: {
      measured: Math.ceil((row.connections.executors / row.executors) * fleet.executors),
      pools: fleet.executors * (fleet.poolMax + 1),
      busy: Math.ceil(perInvocation(row.connections.meanActive) * fleet.rate),
    },
  };
}

export interface ScaleOutReport {
  date: string;
  machine: { cpus: number; model: string; loadavgBefore: number[]; loadavgAfter: number[] };
  settings: { counts: number[]; queued: number; modelMs: number; concurrency: number; poolMax: number; workspaces: number; sessionsPerWorkspace: number; databaseTransport: string };
  rows: ScaleOutRow[];
  knee?: { executors: number; reached: boolean; claimsPerSecond: number };
  fleet: Fleet;
  projection?: Projection;
}

/** The report as a Markdown table, with the knee and the projection under it. */
export function scaleOutTable(report: ScaleOutReport): string {
  const head = "| executors | steady drain /s | whole /s | claims/s | rows/claim | PostgreSQL µs/inv (run's backends / server) | executors µs/inv | model server µs/inv | RabbitMQ µs/inv | host cores busy | connections: all / executors' / busy peak, mean | model calls in flight / slots | bound |";
  const lines = [head, `|${'---|'.repeat(13)}`];
  for (const row of report.rows) {
    const cpu = row.cpuUsPerInvocation;
    lines.push(
      `| ${row.executors} | ${Math.round(row.steady.rps)} | ${Math.round(row.whole.rps)} | ${Math.round(row.claimsPerSecond)} | ${round(row.rowsPerClaim, 1)} | ${cpu.database} / ${cpu.postgres} | ${cpu.executors} | ${cpu.model} | ${cpu.broker} | ${row.cores.host} | ${row.connections.peak} / ${row.connections.executors} / ${row.connections.peakActive}, ${row.connections.meanActive} | ${round(row.modelCallsInFlight, 1)} / ${row.slots} | ${row.bound} |`,
    );
  }
  const { knee, projection, fleet } = report;
  if (knee) lines.push('', `Knee: ${knee.executors} executor${knee.executors === 1 ? '' : 's'}${knee.reached ? '' : ' (not reached: every step gained more than a tenth)'}, ${Math.round(knee.claimsPerSecond)} claims/s.`);
  if (projection) {
    lines.push(
      `On paper, ${fleet.executors} executors at ${fleet.rate.toLocaleString('en')} invocations/s: ${projection.claimsPerSecond.toLocaleString('en')} claims/s (at most ${projection.claimsPerSecondAtMost.toLocaleString('en')}), ` +
        `${projection.completionWritesPerSecond.toLocaleString('en')} completion writes/s, ${projection.databaseCores} PostgreSQL cores for the drain, ` +
        `executors' connections: ${projection.connections.measured.toLocaleString('en')} as measured (${projection.connections.pools.toLocaleString('en')} if every pool fills), ${projection.connections.busy.toLocaleString('en')} busy at once.`,
    );
  }
  return lines.join('\n');
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const pct = (share: number) => `${Math.round(share * 100)}%`;
