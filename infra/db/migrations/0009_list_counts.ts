import type { Knex } from 'knex';

// Counts behind X-Total-Count that COUNT(*) would read row by row on every
// page of a long list (infra/db/keyset.ts): a workspace's live models, and a
// session's feedback. Triggers keep them, so every path that writes those rows
// (registration, deletion, feedback, a cascade) keeps them exact. A session's
// invocations need none: their orders are dense, so `next_order` counts them.
// Models are written rarely; feedback rows already update their session's row
// (the order), so the trigger adds no lock of its own.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('model_counts', (t) => {
    t.integer('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.integer('live').notNullable().defaultTo(0);
  });
  await knex.raw(`insert into model_counts (workspace_id, live) select workspace_id, count(*) from models where deleted_at is null group by workspace_id`);
  await knex.raw(`
    create or replace function didyma_count_live_models() returns trigger language plpgsql as $$
    declare
      delta integer := case
        when tg_op = 'INSERT' then case when new.deleted_at is null then 1 else 0 end
        when tg_op = 'DELETE' then case when old.deleted_at is null then -1 else 0 end
        else (case when new.deleted_at is null then 1 else 0 end) - (case when old.deleted_at is null then 1 else 0 end)
      end;
      workspace integer := case when tg_op = 'DELETE' then old.workspace_id else new.workspace_id end;
    begin
      if delta <> 0 then
        insert into model_counts (workspace_id, live) values (workspace, delta)
        on conflict (workspace_id) do update set live = model_counts.live + excluded.live;
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger models_count_live after insert or delete or update of deleted_at on models for each row execute function didyma_count_live_models()`);

  await knex.schema.alterTable('sessions', (t) => t.integer('feedback_count').notNullable().defaultTo(0));
  await knex.raw(`update sessions s set feedback_count = f.n from (select session_id, count(*) as n from invocations where type = 'DATA_SUBMISSION' group by session_id) f where f.session_id = s.id`);
  await knex.raw(`
    create or replace function didyma_count_feedback() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        update sessions set feedback_count = feedback_count + 1 where id = new.session_id;
      else
        update sessions set feedback_count = feedback_count - 1 where id = old.session_id;
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger invocations_count_feedback_insert after insert on invocations for each row when (new.type = 'DATA_SUBMISSION') execute function didyma_count_feedback()`);
  await knex.raw(`create trigger invocations_count_feedback_delete after delete on invocations for each row when (old.type = 'DATA_SUBMISSION') execute function didyma_count_feedback()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists invocations_count_feedback_insert on invocations');
  await knex.raw('drop trigger if exists invocations_count_feedback_delete on invocations');
  await knex.raw('drop function if exists didyma_count_feedback()');
  await knex.schema.alterTable('sessions', (t) => t.dropColumn('feedback_count'));
  await knex.raw('drop trigger if exists models_count_live on models');
  await knex.raw('drop function if exists didyma_count_live_models()');
  await knex.schema.dropTableIfExists('model_counts');
}
