import { judge, type TargetResult, type TargetSpec } from './verdict.js';
import type { Brief } from './load.js';
import type { Percentiles } from './paired-latency.js';

// (10) what one shadow version costs the caller: POSTs of predictions in
// sessions opened on an alias whose policy is 100% on its version, against
// the same POSTs through an alias with the same policy and one shadow
// version, in interleaved rounds (plain, shadowed, plain, shadowed, …) at the
// same rate. A pair is the two rounds of one turn; the figure is the median
// of the pairs' ratios, the noise their spread (bench/lib/verdict.ts).

/** One round: POSTs at the rate in fresh sessions of one alias, waited for until every invocation (and shadow) is final. */
export interface ShadowRound {
  /** The POSTs as the caller saw them: the 201's latency. */
  post: Brief;
  /** The primaries' queue wait (created → claimed) and whole time (created → completed), from the database. */
  queued: Percentiles;
  total: Percentiles;
  /** Primary invocations completed. */
  completed: number;
  /** Shadow invocations queued for the round's primaries (0 without a shadow). */
  shadows: number;
  /** CPU ms per primary from the first POST until every invocation of the round was final, by process group: where a shadow's cost lands. */
  cpuMsPerPrimary: ShadowCpu;
}

export interface ShadowCpu {
  public: number;
  executor: number;
  modelServer: number;
  postgres: number;
  rabbitmq: number;
}

export interface ShadowControl {
  /** A round on the alias without a shadow (`shadowed` false) or with one. */
  round(shadowed: boolean): Promise<ShadowRound>;
}

export interface ShadowCostReport {
  rate: number;
  rounds: Array<{ plain: ShadowRound; shadowed: ShadowRound }>;
  /** Shadowed ÷ plain of each figure, judged ≤ 1 (within noise: no cost beyond this host's spread). */
  targets: TargetResult[];
}

const FIGURES: Array<{ key: string; what: string; of: (round: ShadowRound) => number }> = [
  { key: 'post-p50', what: 'POST through an alias with one shadow, p50', of: (round) => round.post.p50 },
  { key: 'post-p99', what: 'POST through an alias with one shadow, p99', of: (round) => round.post.p99 },
  { key: 'queued-p50', what: "primary's queue wait with one shadow, p50", of: (round) => round.queued.p50 },
  { key: 'queued-p99', what: "primary's queue wait with one shadow, p99", of: (round) => round.queued.p99 },
  { key: 'total-p50', what: "primary's completion with one shadow, p50", of: (round) => round.total.p50 },
];

export async function shadowCost(control: ShadowControl, rounds: number, rate: number): Promise<ShadowCostReport> {
  if (rounds < 1) throw new Error('shadowCost needs at least one round');
  const taken: ShadowCostReport['rounds'] = [];
  for (let turn = 0; turn < rounds; turn++) taken.push({ plain: await control.round(false), shadowed: await control.round(true) });
  const targets = FIGURES.map(({ key, what, of }) => {
    const spec: TargetSpec = { id: `10 ${key}`, what, baselineName: 'no shadow', comparison: 'ratio', bound: 1, better: 'lower' };
    return judge(
      spec,
      taken.map((pair) => ({ baseline: of(pair.plain), didyma: of(pair.shadowed) })),
    );
  });
  return { rate, rounds: taken, targets };
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : 'n/a');

const cpu = (c: ShadowCpu) => [c.public, c.executor, c.modelServer, c.postgres, c.rabbitmq].map((value) => value.toFixed(2)).join(' / ');

/** Each round's figures (plain | shadowed), as a markdown table. */
export function shadowTable(report: ShadowCostReport, modelLabel: string): string {
  const header = `(10) POSTs through an alias, ${report.rate}/s, without and with one shadow version (${modelLabel}); ms`;
  const row = (turn: number, name: string, r: ShadowRound) =>
    `| ${turn + 1} | ${name} | ${ms(r.post.p50)} / ${ms(r.post.p99)} | ${ms(r.queued.p50)} / ${ms(r.queued.p99)} | ${ms(r.total.p50)} / ${ms(r.total.p99)} | ${r.completed} | ${r.shadows} | ${cpu(r.cpuMsPerPrimary)} |`;
  const rows = report.rounds.flatMap(({ plain, shadowed }, turn) => [row(turn, 'no shadow', plain), row(turn, 'one shadow', shadowed)]);
  return [header, '', '| turn | alias | POST p50 / p99 | queued p50 / p99 | completed p50 / p99 | primaries | shadows | CPU ms per primary: public / executor / model server / PostgreSQL / RabbitMQ |', '|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}
