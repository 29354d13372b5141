import crypto from 'node:crypto';
import type { Db, Runner } from '../../infra/db/database.js';
import type { TaskDefinition } from '../../infra/process/scheduler.js';
import type { AuditTrail } from '../audit/trail.js';
import { trippedGuard, type CandidateRecord, type PolicyGuards } from './alias-guards.js';
import type { AliasPoliciesService } from './alias-policies.service.js';
import type { AliasPoliciesStore, GuardedPolicy, StoredPolicy } from './alias-policies.store.js';
import { snapshotOf } from './aliases.present.js';
import type { AliasKey, ModelAliasesStore } from './aliases.store.js';
import { MAX_WINDOW_DAYS } from './comparison.service.js';
import type { AliasComparisonStore, ComparisonScope } from './comparison.store.js';
import type { ModelsStore } from './store.js';

/** Who the audit trail names for a rollback: the platform's guard evaluation, not a person. */
export const GUARDS_ACTOR = 'alias-guards';
/** How often the candidates of guarded policies are judged. */
export const ALIAS_GUARD_INTERVAL_MS = 30_000;
/** Guarded policies read per page; each is judged on its own, so a page bounds memory, not work. */
const PAGE = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Where a rollback's `alias.rolled_back` event is queued, in the rollback's transaction (the webhooks feature, wired by the platform). */
export interface RollbackEvents {
  queueAliasRolledBack(trx: Runner, workspaceId: number, rollback: Record<string, unknown>): Promise<void>;
}

interface Tripped {
  modelId: number;
  version: string;
  reason: string;
}

/**
 * Holds the weighted candidates of guarded traffic policies to their guards:
 * a candidate that trips one loses its weight to the primary, with a history
 * row, an audit record and an `alias.rolled_back` event, all in one
 * transaction under the alias's lock, so each trip is acted on exactly once
 * whichever replica sees it first.
 */
export class AliasGuardsService {
  constructor(
    private readonly db: Db,
    private readonly stores: {
      aliases: Pick<ModelAliasesStore, 'lock' | 'appendMove'>;
      policies: Pick<AliasPoliciesStore, 'guarded' | 'of'>;
      comparison: Pick<AliasComparisonStore, 'invocationOutcomes' | 'feedbackProperties'>;
      models: Pick<ModelsStore, 'byId'>;
    },
    private readonly effects: { policies: Pick<AliasPoliciesService, 'zeroCandidate'>; webhooks: RollbackEvents; audit: Pick<AuditTrail, 'recordIn'> },
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The periodic evaluation: every guarded policy, a page at a time. */
  task(intervalMs: number): TaskDefinition {
    return { name: 'alias_guard_evaluation', intervalMs, run: (stopping) => this.evaluate(stopping) };
  }

  /** Judges every guarded policy's candidates once; the number of candidates rolled back. */
  async evaluate(stopping?: AbortSignal): Promise<number> {
    let rolledBack = 0;
    for (let after = 0; ; ) {
      const page = await this.stores.policies.guarded(this.db, after, PAGE);
      for (const guarded of page) {
        if (stopping?.aborted) return rolledBack;
        rolledBack += await this.judge(guarded);
      }
      if (page.length < PAGE) return rolledBack;
      after = page.at(-1)!.alias_id;
    }
  }

  /** Judges one policy outside any transaction, then rolls back what tripped under the alias's lock if the policy is still the one judged. */
  private async judge(guarded: GuardedPolicy): Promise<number> {
    const policy = await this.stores.policies.of(this.db, guarded.alias_id);
    const guards = policy?.row.guards;
    const candidates = policy?.targets.filter((t) => t.role === 'weighted' && t.weight! > 0) ?? [];
    if (!policy || !guards || !candidates.length) return 0;
    const records = await this.records(this.scopeOf(guarded, policy), guards, candidates.map((c) => c.model_id));
    const tripped = candidates.flatMap((c): Tripped[] => {
      const reason = trippedGuard(guards, records.get(c.model_id) ?? emptyRecord());
      return reason ? [{ modelId: c.model_id, version: c.version, reason }] : [];
    });
    if (!tripped.length) return 0;
    return this.db.transaction((tx) => this.rollBack(tx, guarded, policy, tripped));
  }

  private async rollBack(tx: Runner, guarded: GuardedPolicy, judged: StoredPolicy, tripped: Tripped[]): Promise<number> {
    const key: AliasKey = { workspaceId: guarded.workspace_id, modelCode: guarded.model_code, alias: guarded.alias };
    const row = await this.stores.aliases.lock(tx, key);
    const current = row?.id === guarded.alias_id ? await this.stores.policies.of(tx, row.id) : undefined;
    // Changed since it was judged (set, moved, deleted, or rolled back by another replica): judged anew at the next run.
    if (!row || !current || !samePolicy(current, judged)) return 0;
    const primary = (await this.stores.models.byId(tx, row.model_id))!.version;
    let rolledBack = 0;
    for (const { version, reason } of tripped) {
      const change = await this.effects.policies.zeroCandidate(tx, row.id, primary, version);
      if (!change) continue;
      const requestId = crypto.randomUUID();
      await this.stores.aliases.appendMove(tx, { workspace_id: key.workspaceId, model_code: key.modelCode, alias: key.alias, from_version: primary, to_version: primary, actor_user_id: null, request_id: requestId, reason, ...change });
      await this.effects.audit.recordIn(tx, auditEntry(key, requestId));
      await this.effects.webhooks.queueAliasRolledBack(tx, key.workspaceId, {
        workspace: guarded.workspace,
        model_code: key.modelCode,
        alias: key.alias,
        version,
        primary_version: primary,
        reason,
        policy: change.to_policy,
        request_id: requestId,
      });
      rolledBack++;
    }
    return rolledBack;
  }

  /** The invocations judged: those of the alias's sessions created since the policy last changed, at most the comparison's longest window. */
  private scopeOf(guarded: GuardedPolicy, policy: StoredPolicy): ComparisonScope {
    const until = this.now();
    const since = new Date(Math.max(new Date(policy.row.updated_at).getTime(), until.getTime() - MAX_WINDOW_DAYS * DAY_MS));
    return { workspaceId: guarded.workspace_id, modelCode: guarded.model_code, alias: guarded.alias, since, until };
  }

  /** How each candidate ran, read by the comparison's queries (one snapshot). */
  private records(scope: ComparisonScope, guards: PolicyGuards, modelIds: number[]): Promise<Map<number, CandidateRecord>> {
    return this.db.transaction(
      async (tx) => {
        const wanted = modelIds.flatMap((model_id) => (guards.feedback ?? []).map((g) => ({ model_id, key: g.property })));
        const outcomes = await this.stores.comparison.invocationOutcomes(tx, scope);
        const properties = wanted.length ? await this.stores.comparison.feedbackProperties(tx, scope, wanted) : [];
        const records = new Map<number, CandidateRecord>(modelIds.map((id) => [id, emptyRecord()]));
        for (const row of outcomes) {
          const record = records.get(row.model_id);
          if (record) Object.assign(record, { completed: row.completed, errors: row.error, runP99Ms: row.run_p99 });
        }
        for (const { model_id, key, ...aggregate } of properties) records.get(model_id)?.feedback.set(key, aggregate);
        return records;
      },
      { isolationLevel: 'repeatable read', readOnly: true },
    );
  }
}

const emptyRecord = (): CandidateRecord => ({ completed: 0, errors: 0, runP99Ms: null, feedback: new Map() });

const samePolicy = (a: StoredPolicy, b: StoredPolicy) =>
  new Date(a.row.updated_at).getTime() === new Date(b.row.updated_at).getTime() && JSON.stringify(snapshotOf(a, '')) === JSON.stringify(snapshotOf(b, ''));

function auditEntry(key: AliasKey, requestId: string) {
  return {
    actor_type: 'platform' as const,
    actor_user_id: null,
    actor_id: GUARDS_ACTOR,
    workspace_id: key.workspaceId,
    action: 'rollBackAliasCandidate',
    method: 'PUT',
    path: `/api/platform_model/${key.modelCode}/alias/${key.alias}/policy`,
    resource_type: 'alias',
    resource_id: `${key.modelCode}/${key.alias}`,
    outcome: 200,
    request_id: requestId,
    trace_id: null,
    source_address: null,
  };
}
