import type { Knex } from 'knex';
import * as identity from './0001_identity.js';
import * as registry from './0002_registry.js';
import * as invocations from './0003_invocations.js';
import * as dashboard from './0004_dashboard.js';
import * as changeNotifications from './0005_change_notifications.js';
import * as rateLimits from './0006_rate_limits.js';
import * as invocationsUpkeep from './0007_invocations_upkeep.js';
import * as listKeysets from './0008_list_keysets.js';
import * as listCounts from './0009_list_counts.js';
import * as datasets from './0010_datasets.js';
import * as fairShare from './0011_fair_share.js';
import * as workspaceTurns from './0012_workspace_turns.js';
import * as idempotencyKeys from './0013_idempotency_keys.js';
import * as cancelledInvocations from './0014_cancelled_invocations.js';
import * as retryPolicy from './0015_retry_policy.js';
import * as invocationEvents from './0016_invocation_events.js';
import * as webhooks from './0017_webhooks.js';
import * as auditRecords from './0018_audit_records.js';
import * as invocationTraces from './0019_invocation_traces.js';
import * as datasetTables from './0020_dataset_tables.js';
import * as queueTurns from './0022_queue_turns.js';
import * as eventsAnnouncedAfterCommit from './0023_events_announced_after_commit.js';
import * as webhookTriggerGuard from './0024_webhook_trigger_guard.js';
import * as invocationSessionOwner from './0025_invocation_session_owner.js';
import * as loginLockAccounts from './0026_login_lock_accounts.js';
import * as webhookFairClaim from './0027_webhook_fair_claim.js';
import * as wakeupsNotPublications from './0028_wakeups_not_publications.js';
import * as schemasKeepKeyOrder from './0029_schemas_keep_key_order.js';
import * as deliveriesQueuedByTransitions from './0030_deliveries_queued_by_transitions.js';
import * as clusterState from './0031_cluster_state.js';
import * as ssoIdentities from './0032_sso_identities.js';
import * as ssoDeviceSignIns from './0033_sso_device_sign_ins.js';
import * as ssoStartSources from './0036_sso_start_sources.js';
import * as servingStates from './0037_serving_states.js';
import * as modelAliases from './0040_model_aliases.js';
import * as aliasPolicies from './0041_alias_policies.js';
import * as aliasSessions from './0042_alias_sessions.js';
import * as shadowInvocations from './0043_shadow_invocations.js';
import * as aliasGuards from './0044_alias_guards.js';

interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
  /** `{ transaction: false }` for a statement PostgreSQL refuses inside one (`create index concurrently`). */
  config?: { transaction: boolean };
}

// Migrations are imported, not discovered on disk, so the same list runs from
// TypeScript sources, the compiled dist/ folder and the container image alike.
const migrations: Migration[] = [
  { name: '0001_identity', ...identity },
  { name: '0002_registry', ...registry },
  { name: '0003_invocations', ...invocations },
  { name: '0004_dashboard', ...dashboard },
  { name: '0005_change_notifications', ...changeNotifications },
  { name: '0006_rate_limits', ...rateLimits },
  { name: '0007_invocations_upkeep', ...invocationsUpkeep },
  { name: '0008_list_keysets', ...listKeysets },
  { name: '0009_list_counts', ...listCounts },
  { name: '0010_datasets', ...datasets },
  { name: '0011_fair_share', ...fairShare },
  { name: '0012_workspace_turns', ...workspaceTurns },
  { name: '0013_idempotency_keys', ...idempotencyKeys },
  { name: '0014_cancelled_invocations', ...cancelledInvocations },
  { name: '0015_retry_policy', ...retryPolicy },
  { name: '0016_invocation_events', ...invocationEvents },
  { name: '0017_webhooks', ...webhooks },
  { name: '0018_audit_records', ...auditRecords },
  { name: '0019_invocation_traces', ...invocationTraces },
  { name: '0020_dataset_tables', ...datasetTables },
  { name: '0022_queue_turns', ...queueTurns },
  { name: '0023_events_announced_after_commit', ...eventsAnnouncedAfterCommit },
  { name: '0024_webhook_trigger_guard', ...webhookTriggerGuard },
  { name: '0025_invocation_session_owner', ...invocationSessionOwner },
  { name: '0026_login_lock_accounts', ...loginLockAccounts },
  { name: '0027_webhook_fair_claim', ...webhookFairClaim },
  { name: '0028_wakeups_not_publications', ...wakeupsNotPublications },
  { name: '0029_schemas_keep_key_order', ...schemasKeepKeyOrder },
  { name: '0030_deliveries_queued_by_transitions', ...deliveriesQueuedByTransitions },
  { name: '0031_cluster_state', ...clusterState },
  { name: '0032_sso_identities', ...ssoIdentities },
  { name: '0033_sso_device_sign_ins', ...ssoDeviceSignIns },
  { name: '0036_sso_start_sources', ...ssoStartSources },
  { name: '0037_serving_states', ...servingStates },
  { name: '0040_model_aliases', ...modelAliases },
  { name: '0041_alias_policies', ...aliasPolicies },
  { name: '0042_alias_sessions', ...aliasSessions },
  { name: '0043_shadow_invocations', ...shadowInvocations },
  { name: '0044_alias_guards', ...aliasGuards },
];

export const migrationSource: Knex.MigrationSource<Migration> = {
  getMigrations: async () => migrations,
  getMigrationName: (migration) => migration.name,
  getMigration: async (migration) => migration,
};
