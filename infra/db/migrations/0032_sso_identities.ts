import type { Knex } from 'knex';

// Single sign-on through OpenID Providers (features/identity/sso/). A person
// signed in by a provider is linked to a didyma user by the pair (issuer,
// subject), never by e-mail, which a provider may let its users change. A
// sign-in under way is one row keyed by its `state`'s hash, taken (deleted)
// at the callback, so it works once and only before it expires. A token
// family opened by a sign-in keeps the provider's refresh token, sealed, so
// that each refresh of the family asks the provider again, and its ID token,
// for the logout at the provider. A native app (the CLI) signs in through
// the same flow, from a loopback redirect of its own, and redeems a one-time
// code with its PKCE verifier for the tokens.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sso_identities', (t) => {
    t.increments('id');
    t.text('issuer').notNullable();
    t.text('subject').notNullable();
    t.text('connection_id').notNullable();
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_sign_in_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['issuer', 'subject']);
    t.index(['user_id']);
  });
  await knex.schema.createTable('sso_sign_ins', (t) => {
    t.text('state_hash').primary();
    t.text('connection_id').notNullable();
    t.text('browser_hash').notNullable();
    // The PKCE code verifier and the nonce, sealed with the platform's key.
    t.text('secrets_sealed').notNullable();
    t.text('return_to');
    // A native app's sign-in (the CLI): its loopback redirect URI, PKCE challenge and state.
    t.text('app_redirect_uri');
    t.text('app_code_challenge');
    t.text('app_state');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
  // The one-time code a native app redeems, with its PKCE verifier, for the tokens of its sign-in (the sign-in sealed).
  await knex.schema.createTable('sso_app_codes', (t) => {
    t.text('code_hash').primary();
    t.text('redirect_uri').notNullable();
    t.text('code_challenge').notNullable();
    t.text('grant_sealed').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
  await knex.schema.createTable('sso_token_families', (t) => {
    t.uuid('family_id').primary().references('refresh_token_families.id').onDelete('CASCADE');
    t.integer('identity_id').notNullable().references('sso_identities.id').onDelete('CASCADE');
    t.text('refresh_token_sealed').notNullable();
    // The provider's ID token, sealed: the hint of the logout at the provider.
    t.text('id_token_sealed');
    t.index(['identity_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sso_app_codes');
  await knex.schema.dropTable('sso_token_families');
  await knex.schema.dropTable('sso_sign_ins');
  await knex.schema.dropTable('sso_identities');
}
