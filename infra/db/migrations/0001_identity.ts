import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.increments('id');
    t.text('email').notNullable().unique(); // stored lower-cased
    t.text('password_hash'); // null for service principals
    t.text('name').notNullable().defaultTo('');
    t.text('surname').notNullable().defaultTo('');
    t.text('preferred_language').notNullable().defaultTo('en');
    t.boolean('is_staff').notNullable().defaultTo(false);
    t.boolean('is_service').notNullable().defaultTo(false);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('terms_accepted_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('workspaces', (t) => {
    t.increments('id');
    // Names stay reserved after deletion so an old token can never match a new workspace.
    t.text('name').notNullable().unique();
    t.boolean('disabled').notNullable().defaultTo(false);
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
  });

  await knex.schema.createTable('memberships', (t) => {
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('role').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'workspace_id']);
    t.index(['workspace_id']);
  });
  await knex.raw(`alter table memberships add constraint memberships_role_check check (role in ('user', 'supervisor'))`);

  await knex.schema.createTable('refresh_token_families', (t) => {
    t.uuid('id').primary();
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('workspace_id').references('workspaces.id').onDelete('CASCADE');
    t.text('current_jti_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('rotated_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.text('revoked_reason');
    t.index(['user_id']);
  });

  await knex.schema.createTable('api_tokens', (t) => {
    t.increments('id');
    t.text('name').notNullable();
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.text('expiration_date').notNullable(); // YYYY-MM-DD, valid through that UTC day
    t.timestamp('last_used', { useTz: true });
    t.timestamp('created', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.boolean('is_active').notNullable().defaultTo(true);
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('oauth_applications', (t) => {
    t.increments('id');
    t.text('name').notNullable();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('client_id').notNullable().unique();
    t.text('client_secret_hash').notNullable();
    t.integer('service_user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('role').notNullable().defaultTo('user');
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('invitations', (t) => {
    t.increments('id');
    t.text('token_hash').notNullable().unique();
    t.text('email').notNullable();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('role').notNullable();
    t.integer('invited_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true });
    t.integer('accepted_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['email']);
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('workspace_logos', (t) => {
    t.integer('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.text('content_type').notNullable();
    t.binary('data').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['workspace_logos', 'invitations', 'oauth_applications', 'api_tokens', 'refresh_token_families', 'memberships', 'workspaces', 'users']) {
    await knex.schema.dropTableIfExists(table);
  }
}
