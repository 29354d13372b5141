import type { Runner } from '../../infra/db/database.js';

/** The sessions compared: those opened through one alias of a model code, with invocations or feedback in `[since, until)`. */
export interface ComparisonScope {
  workspaceId: number;
  modelCode: string;
  alias: string;
  since: Date;
  until: Date;
}

/** A version that sessions opened through the alias resolved to. */
export interface ComparedVersion {
  model_id: number;
  version: string;
  feedback_schema: Record<string, unknown> | null;
  /** Whether some of its sessions through the alias are shadow sessions (it received copies of the alias's predictions). */
  shadow: boolean;
}

/** The stored responses of a shadow invocation and of its primary, both COMPLETED. */
export interface ShadowPairRow {
  primary_response: string;
  shadow_response: string;
}

/** Counts and percentiles (milliseconds) of one version's invocations in the window. */
export interface InvocationOutcomeRow {
  model_id: number;
  invocations: number;
  completed: number;
  error: number;
  cancelled: number;
  pending: number;
  queue_count: number;
  queue_p50: number | null;
  queue_p99: number | null;
  run_count: number;
  run_p50: number | null;
  run_p99: number | null;
}

/** A property of a version's feedback schema to summarise. */
export interface WantedProperty {
  model_id: number;
  key: string;
}

/** Aggregates of one feedback property of one version in the window. */
export interface FeedbackPropertyRow {
  model_id: number;
  key: string;
  booleans: number;
  trues: number;
  numbers: number;
  mean: number | null;
  sd: number | null;
}

export interface FeedbackValueRow {
  model_id: number;
  key: string;
  value: unknown;
  count: number;
}

/** Every query of the comparison of an alias's versions; each reads only the window's rows of the alias's sessions. */
export interface AliasComparisonStore {
  /** Whether the alias was ever set in the workspace (its moves outlive it). */
  everSet(db: Runner, scope: Pick<ComparisonScope, 'workspaceId' | 'modelCode' | 'alias'>): Promise<boolean>;
  /** The versions of the alias's sessions opened before `until`, in registration order. */
  versions(db: Runner, scope: ComparisonScope): Promise<ComparedVersion[]>;
  invocationOutcomes(db: Runner, scope: ComparisonScope): Promise<InvocationOutcomeRow[]>;
  feedbackCounts(db: Runner, scope: ComparisonScope): Promise<Array<{ model_id: number; count: number }>>;
  feedbackProperties(db: Runner, scope: ComparisonScope, wanted: WantedProperty[]): Promise<FeedbackPropertyRow[]>;
  feedbackValues(db: Runner, scope: ComparisonScope, wanted: WantedProperty[]): Promise<FeedbackValueRow[]>;
  /** The first `limit` COMPLETED shadow invocations of the version in the window whose primary COMPLETED too, oldest first. */
  shadowPairs(db: Runner, scope: ComparisonScope, modelId: number, limit: number): Promise<ShadowPairRow[]>;
}

// The alias's sessions opened before the window ends (sessions_alias of migration 0042), and their
// rows created in it through invocations_list (workspace, session, created_at): the work is bounded
// by the alias's sessions and the window's rows, never the workspace's history.
const ALIAS_SESSIONS = `
  alias_sessions as (
    select s.id, s.model_id from sessions s join models m on m.id = s.model_id
     where s.workspace_id = ? and s.alias = ? and s.created_at < ? and m.model_code = ?)`;
const IN_WINDOW = `i.workspace_id = ? and i.session_id = s.id and i.created_at >= ? and i.created_at < ?`;
const scopeBindings = (scope: ComparisonScope) => [scope.workspaceId, scope.alias, scope.until, scope.modelCode, scope.workspaceId, scope.since, scope.until];

// Feedback bodies are parsed only for versions with a feedback schema: a version's schema never
// changes and every feedback sent to it was validated as JSON, while a version without one takes any text.
const FEEDBACK = `
  with ${ALIAS_SESSIONS},
  feedback as (
    select s.model_id,
           case when m.feedback_schema is not null then i.body::jsonb end as doc
      from alias_sessions s join models m on m.id = s.model_id
      join invocations i on ${IN_WINDOW} and i.type = 'DATA_SUBMISSION'),
  wanted as (select * from jsonb_to_recordset(?::jsonb) as w(model_id integer, key text))`;

const millis = (from: string, to: string) => `(extract(epoch from (${to} - ${from})) * 1000)::float8`;
const RAN = `i.started_at is not null`;
const RUN_ENDED = `i.status in ('COMPLETED', 'ERROR') and i.started_at is not null and i.completed_at is not null`;

const OUTCOMES = `
  with ${ALIAS_SESSIONS}
  select s.model_id,
         count(*)::int as invocations,
         (count(*) filter (where i.status = 'COMPLETED'))::int as completed,
         (count(*) filter (where i.status = 'ERROR'))::int as error,
         (count(*) filter (where i.status = 'CANCELLED'))::int as cancelled,
         (count(*) filter (where i.status in ('QUEUED', 'IN_PROGRESS')))::int as pending,
         (count(*) filter (where ${RAN}))::int as queue_count,
         percentile_cont(0.5) within group (order by ${millis('i.created_at', 'i.started_at')}) filter (where ${RAN}) as queue_p50,
         percentile_cont(0.99) within group (order by ${millis('i.created_at', 'i.started_at')}) filter (where ${RAN}) as queue_p99,
         (count(*) filter (where ${RUN_ENDED}))::int as run_count,
         percentile_cont(0.5) within group (order by ${millis('i.started_at', 'i.completed_at')}) filter (where ${RUN_ENDED}) as run_p50,
         percentile_cont(0.99) within group (order by ${millis('i.started_at', 'i.completed_at')}) filter (where ${RUN_ENDED}) as run_p99
    from alias_sessions s
    join invocations i on ${IN_WINDOW} and i.model_id = s.model_id and i.type <> 'DATA_SUBMISSION'
   group by s.model_id`;

// The property's value as a number when it is one (aggregates skip the nulls), never a cast of another kind.
const NUMBER = `case when jsonb_typeof(f.doc -> w.key) = 'number' then (f.doc ->> w.key)::float8 end`;

// The version's shadow sessions through the alias, their COMPLETED shadow invocations in the window
// (invocations_list) and each one's primary by its id: at most `limit` pairs are read.
const SHADOW_PAIRS = `
  with ${ALIAS_SESSIONS}
  select p.response as primary_response, i.response as shadow_response
    from alias_sessions s
    join invocations i on ${IN_WINDOW} and i.model_id = s.model_id and i.shadow_of is not null and i.status = 'COMPLETED'
    join invocations p on p.id = i.shadow_of and p.workspace_id = i.workspace_id and p.status = 'COMPLETED'
   where s.model_id = ?
   order by i.created_at, i.id
   limit ?`;

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

export const aliasComparisonStore: AliasComparisonStore = {
  everSet: async (db, scope) =>
    !!(await db('model_alias_moves').where({ workspace_id: scope.workspaceId, model_code: scope.modelCode, alias: scope.alias }).first(db.raw('1 as found'))),
  versions: async (db, scope) =>
    rowsOf<ComparedVersion>(
      await db.raw(
        `select m.id as model_id, m.version, m.feedback_schema,
                exists (select 1 from sessions s where s.workspace_id = ? and s.alias = ? and s.created_at < ? and s.model_id = m.id and s.shadow_of is not null) as shadow
           from models m
          where m.id in (select s.model_id from sessions s where s.workspace_id = ? and s.alias = ? and s.created_at < ?)
            and m.model_code = ? and m.workspace_id = ?
          order by m.id`,
        [scope.workspaceId, scope.alias, scope.until, scope.workspaceId, scope.alias, scope.until, scope.modelCode, scope.workspaceId],
      ),
    ),
  invocationOutcomes: async (db, scope) => rowsOf<InvocationOutcomeRow>(await db.raw(OUTCOMES, scopeBindings(scope))),
  feedbackCounts: async (db, scope) =>
    rowsOf<{ model_id: number; count: number }>(await db.raw(`${FEEDBACK} select model_id, count(*)::int as count from feedback group by model_id`, [...scopeBindings(scope), '[]'])),
  feedbackProperties: async (db, scope, wanted) =>
    rowsOf<FeedbackPropertyRow>(
      await db.raw(
        `${FEEDBACK}
         select w.model_id, w.key,
                (count(*) filter (where jsonb_typeof(f.doc -> w.key) = 'boolean'))::int as booleans,
                (count(*) filter (where f.doc -> w.key = 'true'::jsonb))::int as trues,
                (count(*) filter (where jsonb_typeof(f.doc -> w.key) = 'number'))::int as numbers,
                avg(${NUMBER}) as mean,
                stddev_samp(${NUMBER}) as sd
           from feedback f join wanted w on w.model_id = f.model_id
          where f.doc is not null
          group by w.model_id, w.key`,
        [...scopeBindings(scope), JSON.stringify(wanted)],
      ),
    ),
  feedbackValues: async (db, scope, wanted) =>
    rowsOf<FeedbackValueRow>(
      await db.raw(
        `${FEEDBACK}
         select w.model_id, w.key, f.doc -> w.key as value, count(*)::int as count
           from feedback f join wanted w on w.model_id = f.model_id
          where f.doc -> w.key is not null
          group by w.model_id, w.key, f.doc -> w.key`,
        [...scopeBindings(scope), JSON.stringify(wanted)],
      ),
    ),
  shadowPairs: async (db, scope, modelId, limit) => rowsOf<ShadowPairRow>(await db.raw(SHADOW_PAIRS, [...scopeBindings(scope), modelId, limit])),
};
