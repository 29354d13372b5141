import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';

// Mocha's own report (an error with a diff is laid out apart), not a hand-written one, so a change of its layout fails here rather than hiding CI's failures.
function mochaReport(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-ci-failures-'));
  const spec = path.join(dir, 'sample.test.mjs');
  fs.writeFileSync(
    spec,
    `import assert from 'node:assert';
     describe('outer', () => {
       describe('inner', () => { it('passes', () => {}); it('fails', () => { throw new Error('boom\\nsecond line'); }); });
       it('differs', () => assert.deepStrictEqual(['a'], []));
       it('fails at the top', () => { throw new Error('bang'); });
     });`,
  );
  const run = spawnSync('npx', ['mocha', '--no-config', '--reporter', 'spec', spec], { encoding: 'utf8' });
  return `# units: 1 file\n${run.stdout}# integration: 1 file\n\n  3 passing (5ms)\n`;
}

describe("CI's closing list of failures (.ci/failures.awk)", () => {
  it('prints each failing test once, with its titles and the first line of its error, and nothing of passing runs', () => {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-ci-log-')), 'make-test.log');
    fs.writeFileSync(log, mochaReport());
    expect(execFileSync('awk', ['-f', '.ci/failures.awk', log], { encoding: 'utf8' }).trim().split('\n')).to.deep.equal([
      'failed: outer › differs — AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:',
      'failed: outer › fails at the top — Error: bang',
      'failed: outer › inner › fails — Error: boom',
    ]);
  });
});
