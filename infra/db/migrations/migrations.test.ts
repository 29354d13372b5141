import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { CHANGES_CHANNEL } from '../change-feed.js';
import { createDatabase } from '../database.js';
import { isEmbedded } from '../embedded.js';
import { migrationSource } from './index.js';

const run = promisify(execFile);

/** `didyma migrate` on the embedded database in `dataDir`, in a child process: a PGlite that hangs blocks its whole process. */
async function migrateDataDir(dataDir: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'cli/entry.ts', 'migrate'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DIDYMA_DATA_DIR: dataDir },
    timeout: 90_000,
  });
  return stdout.trim();
}

describe('migrations on the embedded database', () => {
  it('run to the latest on a PGlite data folder, as `didyma dev` keeps it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-migrations-'));
    try {
      const all = (await migrationSource.getMigrations([])).map((migration) => migrationSource.getMigrationName(migration));
      // With migration 0007's `create index concurrently`, PGlite on a data folder at times never came back
      // (`didyma dev` did not start); it builds plainly there now.
      expect(await migrateDataDir(dataDir)).to.equal(`migrations applied: ${all.join(', ')}`);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('tell the embedded database from a PostgreSQL server', async () => {
    const embedded = createDatabase({});
    const server = createDatabase({ url: 'postgres://nobody:secret@127.0.0.1:1/none' });
    try {
      expect(isEmbedded(embedded)).to.equal(true);
      expect(isEmbedded(server)).to.equal(false);
    } finally {
      await Promise.all([embedded.destroy(), server.destroy()]);
    }
  });
});

describe('migrations as frozen text', () => {
  const folder = path.dirname(new URL(import.meta.url).pathname);
  const files = fs.readdirSync(folder).filter((name) => /^\d{4}_.*\.ts$/.test(name) && !name.endsWith('.test.ts'));

  it('import no other migration and no application code, so that editing one never changes what another installs', () => {
    expect(files.length).to.be.above(20);
    for (const file of files) {
      const imports = [...fs.readFileSync(path.join(folder, file), 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((match) => match[1]);
      expect(imports.filter((source) => source !== 'knex' && source !== '../embedded.js'), file).to.deep.equal([]);
    }
  });

  it('notify on the channel the change feed listens to', () => {
    const channels = files.flatMap((file) => [...fs.readFileSync(path.join(folder, file), 'utf8').matchAll(/pg_notify\('([^']+)'/g)].map((match) => match[1]));
    expect(channels.length).to.be.at.least(4);
    expect(new Set(channels)).to.deep.equal(new Set([CHANGES_CHANNEL]));
  });
});
