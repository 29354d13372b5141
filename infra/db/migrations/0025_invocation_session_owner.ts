import type { Knex } from 'knex';

// An invocation's workspace and user are its session's. Each was checked by a
// foreign key of its own, besides the session's: three lookups and row locks
// per appended row, about a third of an append's time in PostgreSQL
// (docs/benchmarks.md). One key on the session with its workspace and user
// checks the same rows once, and says more: an invocation can no longer name
// a workspace or user other than its session's. Deleting a workspace or a
// user still removes its invocations, through their sessions. The model keeps
// its own key: an explanation runs the explainer's model in the main model's
// session.

const OWNER_KEY = 'sessions_owner_unique';
const OWNER_FOREIGN = 'invocations_session_owner_foreign';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table sessions add constraint ${OWNER_KEY} unique (id, workspace_id, user_id)`);
  // Added unchecked, then checked apart: the check reads every row without blocking writes meanwhile.
  await knex.raw(`
    alter table invocations
      drop constraint invocations_session_id_foreign,
      drop constraint invocations_workspace_id_foreign,
      drop constraint invocations_user_id_foreign,
      add constraint ${OWNER_FOREIGN} foreign key (session_id, workspace_id, user_id)
        references sessions (id, workspace_id, user_id) on delete cascade not valid`);
  await knex.raw(`alter table invocations validate constraint ${OWNER_FOREIGN}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table invocations
      drop constraint ${OWNER_FOREIGN},
      add constraint invocations_session_id_foreign foreign key (session_id) references sessions (id) on delete cascade,
      add constraint invocations_workspace_id_foreign foreign key (workspace_id) references workspaces (id) on delete cascade,
      add constraint invocations_user_id_foreign foreign key (user_id) references users (id) on delete cascade`);
  await knex.raw(`alter table sessions drop constraint ${OWNER_KEY}`);
}
