import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../kernel/config/config.js';
import { createPlatform } from './platform.js';
import { testBox, testKeys } from '../test/support/platform.js';

describe('closing the platform', () => {
  it('tries every step when one fails, closes the database pool all the same, and names the step that failed', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-close-'));
    try {
      // Its own embedded database, so that the pool it closes is its own.
      const platform = createPlatform(loadConfig({ DIDYMA_DATA_DIR: dataDir, DIDYMA_LOG_LEVEL: 'silent' }), { keys: testKeys, box: testBox });
      await platform.db.raw('select 1');
      platform.audit.drain = () => Promise.reject(new Error('the database refused the batch'));
      const failure = await platform.close().then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(failure?.message).to.equal('could not close: audit records');
      expect(platform.shutdown.closing.pending()).to.deep.equal([]);
      const query = await platform.db.raw('select 1').then(
        () => 'answered',
        () => 'refused',
      );
      expect(query, 'a query after close').to.equal('refused');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
