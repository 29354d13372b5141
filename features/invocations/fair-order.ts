// The fair order: who runs next when workspaces share executors. The claim
// (CLAIM_SQL in state.ts, which keeps the transition) takes rows in this order
// from the database, and the executor's model slots (executor/slots.ts) hand
// out model calls to the runs claimed ahead in it; both read the rules here.
//
// The rules: a workspace's turn costs 1 / its weight, so its k-th next run
// has the share (its calls in flight + k) / its weight and the lowest shares
// go first; among equals, the workspace that waited longest; within a
// workspace, the higher priority, then the earliest. A priority never enters
// the share.

/** What a turn costs a workspace of `weight`: its share moves on by this much per call. */
export const turnCost = (weight: number): number => 1 / weight;

/** Within a workspace, whether a run of `a` goes before a run of `b` queued earlier: only a higher priority does. */
export const goesFirst = (a: { priority: number }, b: { priority: number }): boolean => a.priority > b.priority;

/** A workspace's queued invocations in the order it runs them: higher priority first, then the oldest. */
export const WORKSPACE_ORDER = (alias: string) => `${alias}.priority desc, ${alias}.created_at, ${alias}."order"`;

/** The order of the fair index (invocations_fair): by workspace, then each workspace's own order. */
export const FAIR_INDEX_ORDER = (alias: string) => `${alias}.workspace_id, ${WORKSPACE_ORDER(alias)}`;

/** The share of a workspace's next run after `calls` others, as SQL: `turnCost` per call. */
export const shareOf = (calls: string, weight: string) => `(${calls})::float8 / ${weight}`;

/** What the fair choice reads of each workspace's next QUEUED invocation. */
const HEAD_COLUMNS = (alias: string) =>
  ['id', 'workspace_id', 'priority', 'created_at', '"order"', 'model_id', 'available_at'].map((column) => `${alias}.${column}`).join(', ');

/**
 * The fair choice, as the CTEs of a claim (`with recursive …`) ending in
 * `chosen` (id, share_weight): up to `?` QUEUED invocations (`queued(alias)`
 * says which rows are), in the fair order, that the limits let run now.
 *
 * Hard limits: a workspace at `max_in_flight`, and a deployment at
 * `max_concurrent_calls`, get nothing more. Only a claim that holds a
 * workspace's claim lock (claim-locks.ts; `held`, a JSON list of ids) counts
 * those, from a snapshot taken after the lock, so two claims never race past
 * a limit; the limited work of workspaces it does not hold waits for a claim
 * that does. Everything else is claimed by any number of claims at once: rows
 * are locked as they are read and others skip them (`skip locked`).
 *
 * Ties: for a workspace never served, its last turn counts from when its
 * oldest candidate arrived, so a backlog that arrives at once does not go
 * ahead of a workspace served before it.
 *
 * Only the rows that can be chosen are read, and locked: `heads` walks the
 * workspaces with queued work through the fair index (a skip scan), each
 * one's next invocation; only the `limit` workspaces whose next invocations
 * come first can have a row among the `limit` first (`lined_up`), and the
 * `limit` lowest shares are at most the `limit`-th lowest share of those
 * (`threshold`), so a workspace's k-th next counts only while its share stays
 * within it: one row each when the calls in flight are even.
 *
 * Bindings: the held workspaces (JSON), the limit (four times).
 */
export const fairChoice = (queued: (alias: string) => string) => {
  const headClaimable = (alias: string) =>
    `((${alias}.available_at is null or ${alias}.available_at <= now()) and ${alias}.model_id not in (select id from blocked_models))`;
  const claimable = (alias: string) => `${queued(alias)} and ${headClaimable(alias)}`;
  return `
heads as (
  (select ${HEAD_COLUMNS('i')} from invocations i where ${queued('i')} order by ${FAIR_INDEX_ORDER('i')} limit 1)
  union all
  select n.* from heads h cross join lateral (
    select ${HEAD_COLUMNS('i')} from invocations i where ${queued('i')} and i.workspace_id > h.workspace_id order by ${FAIR_INDEX_ORDER('i')} limit 1
  ) n
),
held as (select jsonb_array_elements_text(?::jsonb)::integer as workspace_id),
running as (select i.workspace_id, i.model_id from invocations i where i.status = 'IN_PROGRESS' and i.lease_expires_at >= now()),
workspace_running as (select workspace_id, count(*)::integer as n from running group by workspace_id),
deployment_running as (
  select m.deployment_id, count(*)::integer as n from running r join models m on m.id = r.model_id
   where exists (select 1 from deployments d where d.max_concurrent_calls is not null)
   group by m.deployment_id
),
blocked_deployments as (
  select d.id from deployments d left join deployment_running r on r.deployment_id = d.id
   where d.max_concurrent_calls is not null
     and (coalesce(r.n, 0) >= d.max_concurrent_calls or d.workspace_id not in (select workspace_id from held))
),
blocked_models as (select m.id from models m where m.deployment_id in (select id from blocked_deployments)),
open_workspaces as (
  select h.workspace_id, h.created_at, w.share_weight, w.max_in_flight, t.last_claimed_at, coalesce(r.n, 0) as running,
         ${shareOf('coalesce(r.n, 0) + 1', 'w.share_weight')} as head_share, coalesce(t.last_claimed_at, h.created_at) as head_turn
    from heads h
    join workspaces w on w.id = h.workspace_id
    left join workspace_turns t on t.workspace_id = h.workspace_id
    left join workspace_running r on r.workspace_id = h.workspace_id
   where (w.max_in_flight is null or (h.workspace_id in (select workspace_id from held) and coalesce(r.n, 0) < w.max_in_flight))
     and (${headClaimable('h')} or (select i.id from invocations i where ${claimable('i')} and i.workspace_id = h.workspace_id order by ${WORKSPACE_ORDER('i')} limit 1) is not null)
),
lined_up as (select * from open_workspaces order by head_share, head_turn, created_at limit ?),
threshold as (select max(head_share) as share from lined_up having count(*) >= ?::integer),
allowances as (
  select o.*, least(?::integer, coalesce(o.max_in_flight - o.running, 2147483647),
                    greatest(1, coalesce(floor((select share from threshold) * o.share_weight - o.running + 1e-9)::integer, 2147483647))) as allowance
    from lined_up o
),
next_rows as (
  select c.*, a.share_weight, a.max_in_flight, a.running, a.last_claimed_at
    from allowances a
    cross join lateral (
      select i.id, i.workspace_id, i.priority, i.created_at, i."order", i.model_id
        from invocations i
       where ${claimable('i')} and i.workspace_id = a.workspace_id
       order by ${WORKSPACE_ORDER('i')}
       limit a.allowance
         for update of i skip locked
    ) c
),
candidates as (
  select c.id, c.workspace_id, c.priority, c.created_at, c."order", c.model_id, m.deployment_id, c.share_weight, c.max_in_flight, c.running,
         coalesce(c.last_claimed_at, min(c.created_at) over (partition by c.workspace_id)) as last_turn,
         row_number() over (partition by c.workspace_id order by ${WORKSPACE_ORDER('c')}) as rank
    from next_rows c
    join models m on m.id = c.model_id
),
shares as (
  select c.*, ${shareOf('c.running + c.rank', 'c.share_weight')} as share,
         row_number() over (partition by c.deployment_id order by ${shareOf('c.running + c.rank', 'c.share_weight')}, c.last_turn, c.created_at) as deployment_rank
    from candidates c
   where c.max_in_flight is null or c.running + c.rank <= c.max_in_flight
),
chosen as (
  select s.id, s.share_weight from shares s
    join deployments d on d.id = s.deployment_id
    left join deployment_running r on r.deployment_id = s.deployment_id
   where d.max_concurrent_calls is null or coalesce(r.n, 0) + s.deployment_rank <= d.max_concurrent_calls
   order by s.share, s.last_turn, s.created_at
   limit ?
)`;
};
