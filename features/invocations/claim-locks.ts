import type { Runner } from '../../infra/db/database.js';
import { prepared } from '../../infra/db/prepared.js';
import { WORKSPACE_ORDER, shareOf } from './fair-order.js';

// The hard limits of a claim (`max_in_flight` of a workspace,
// `max_concurrent_calls` of its deployments) hold across executors because
// only one claim at a time counts a limited workspace: the one that holds its
// claim lock, a transaction-scoped advisory lock per workspace. Claims of
// workspaces without limits take no lock at all and run side by side, so
// adding executors adds claims that run at once. A deployment belongs to one
// workspace, so its limit rides on its workspace's lock.

/** The advisory-lock class of a workspace's claim (the two-key form: this class and the workspace's id). */
const CLAIM_LOCK_CLASS = 0x636c6169;

/**
 * Takes, without waiting, the claim locks of up to `?` limited workspaces with
 * queued work and room under `max_in_flight`, in the fair order of their next
 * run, passing over those another claim holds; answers them (`held`), then
 * one row naming the first of them in line whether held or not (`held`
 * false), for a claim that got nothing to wait on. A claim's next statement
 * counts in a snapshot taken after these locks, so it sees every claim that
 * held them before. It also keeps the claim on its generic plan (state.ts).
 */
export const CLAIM_LOCKS_SQL = `
with limited as (
  select w.id, w.share_weight, w.max_in_flight from workspaces w where w.max_in_flight is not null
  union
  select w.id, w.share_weight, w.max_in_flight from deployments d join workspaces w on w.id = d.workspace_id where d.max_concurrent_calls is not null
),
lined_up as (
  select l.id, ${shareOf('r.n + 1', 'l.share_weight')} as share, coalesce(t.last_claimed_at, h.created_at) as last_turn
    from limited l
    cross join lateral (
      select q.created_at from invocations q where q.status = 'QUEUED' and q.workspace_id = l.id order by ${WORKSPACE_ORDER('q')} limit 1
    ) h
    cross join lateral (
      select count(*)::integer as n from invocations i where i.status = 'IN_PROGRESS' and i.lease_expires_at >= now() and i.workspace_id = l.id
    ) r
    left join workspace_turns t on t.workspace_id = l.id
   where l.max_in_flight is null or r.n < l.max_in_flight
),
taken as (
  -- offset 0 keeps the try-lock above the sort: pushed below it, it would lock every limited workspace.
  select o.id from (select id from lined_up order by share, last_turn, id offset 0) o
   where pg_try_advisory_xact_lock(${CLAIM_LOCK_CLASS}, o.id)
   limit ?
)
select id, true as held, null::text as plan from taken
union all
select (select id from lined_up order by share, last_turn, id limit 1), false, set_config('plan_cache_mode', 'force_generic_plan', true)`;

/** The claim locks a claim of up to `limit` rows takes at once, and the first limited workspace in line (null: none has work). */
export async function takeClaimLocks(trx: Runner, limit: number): Promise<{ held: number[]; first: number | null }> {
  const rows = await prepared<{ id: number | null; held: boolean }>(trx, 'invocations.claim-locks', CLAIM_LOCKS_SQL, [limit]);
  return { held: rows.filter((row) => row.held).map((row) => row.id!), first: rows.find((row) => !row.held)?.id ?? null };
}

/** Waits for the claim lock of `workspaceId`, for a claim that found nothing else to take. */
export async function waitForClaimLock(trx: Runner, workspaceId: number): Promise<void> {
  await trx.raw(`select pg_advisory_xact_lock(${CLAIM_LOCK_CLASS}, ?), set_config('plan_cache_mode', 'force_generic_plan', true)`, [workspaceId]);
}
