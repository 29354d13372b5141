import type { Knex } from 'knex';

// A client may cancel queued or running work: CANCELLED is a final status of
// its own, apart from ERROR, so nobody reads a cancel as a model failure.

const STATUSES = (statuses: string[]) => `check (status in (${statuses.map((status) => `'${status}'`).join(', ')}))`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table invocations drop constraint invocations_status_check');
  await knex.raw(`alter table invocations add constraint invocations_status_check ${STATUSES(['QUEUED', 'IN_PROGRESS', 'COMPLETED', 'ERROR', 'CANCELLED'])}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex('invocations').where({ status: 'CANCELLED' }).update({ status: 'ERROR', error: 'Cancelled.' });
  await knex.raw('alter table invocations drop constraint invocations_status_check');
  await knex.raw(`alter table invocations add constraint invocations_status_check ${STATUSES(['QUEUED', 'IN_PROGRESS', 'COMPLETED', 'ERROR'])}`);
}
