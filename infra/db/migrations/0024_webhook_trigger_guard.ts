import type { Knex } from 'knex';
import { FINISHED, webhookEventsFunction } from './0017_webhooks.js';

// Every insert into invocation_events ran the whole statement that builds
// deliveries, though most make none: appends and claims write QUEUED and
// IN_PROGRESS events, and most workspaces have no endpoint. That statement
// took a sixth of a completion's time in PostgreSQL (docs/benchmarks.md). A
// small query now says first whether any event of the insert can make a
// delivery.
const GUARD = `
      if not exists (
        select 1 from new_rows e join webhook_endpoints ep on ep.workspace_id = e.workspace_id and ep.enabled
         where e.status in (${FINISHED})
      ) then
        return null;
      end if;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(webhookEventsFunction(GUARD));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(webhookEventsFunction());
}
