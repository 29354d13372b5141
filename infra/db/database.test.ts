import { expect } from 'chai';
import { sharedDatabase } from '../../test/support/database.js';
import { needsPostgres } from '../../test/support/skips.js';

describe('database connections', () => {
  it('run without JIT compilation, whatever the server default', async function () {
    needsPostgres(this, 'PGlite has no JIT');
    const db = await sharedDatabase();
    // The server's own default stays on (PostgreSQL's); the platform's connections turn it off at start-up.
    const { rows } = (await db.raw(`select current_setting('jit') as jit, (select boot_val from pg_settings where name = 'jit') as server`)) as { rows: Array<{ jit: string; server: string }> };
    expect(rows[0]).to.deep.equal({ jit: 'off', server: 'on' });
  });
});
