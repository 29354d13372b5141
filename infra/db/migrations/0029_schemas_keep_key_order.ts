import type { Knex } from 'knex';

// A model's schemas are kept as the text registered (`json`), not `jsonb`,
// which orders an object's keys by length: a dataset's input, output and
// feedback columns follow the schema's `properties` in the order the model's
// owner wrote them. No query looks inside these columns. Rows written before
// keep the order jsonb gave them, which their text now holds.

const COLUMNS = ['input_schema', 'output_schema', 'feedback_schema'];

async function retype(knex: Knex, type: 'json' | 'jsonb'): Promise<void> {
  const changes = COLUMNS.map((column) => `alter column ${column} type ${type} using ${column}::text::${type}`).join(', ');
  await knex.raw(`alter table models ${changes}`);
}

export async function up(knex: Knex): Promise<void> {
  await retype(knex, 'json');
}

export async function down(knex: Knex): Promise<void> {
  await retype(knex, 'jsonb');
}
