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
  const failures = (report: string) => {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-ci-log-')), 'make-test.log');
    fs.writeFileSync(log, report);
    return execFileSync('awk', ['-f', '.ci/failures.awk', log], { encoding: 'utf8' }).trimEnd().split('\n');
  };

  it('prints each failing test once, with its titles and the first line of its error, then the rest of the error up to its stack, and nothing of passing runs', () => {
    const lines = failures(mochaReport());
    expect(lines.filter((line) => line.startsWith('failed: '))).to.deep.equal([
      'failed: outer › differs — AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:',
      'failed: outer › fails at the top — Error: bang',
      'failed: outer › inner › fails — Error: boom',
    ]);
    expect(lines.slice(1, 3)).to.deep.equal(['    + actual - expected', '    + [']);
    expect(lines.slice(-2)).to.deep.equal(['failed: outer › inner › fails — Error: boom', '    second line']);
    expect(lines.join('\n')).not.to.match(/^ +at |passes/m);
  });

  it('keeps a long error to its first and last six lines, and says how many it left out', () => {
    const output = Array.from({ length: 20 }, (_, i) => `child line ${i + 1}`).join('\n');
    const report = `\n  1 passing (1ms)\n  1 failing\n\n  1) suite\n       test:\n     AssertionError: the server's exit:\n${output}\n      at Context.<anonymous> (x.ts:1:1)\n\n`;
    expect(failures(report)).to.deep.equal([
      "failed: suite › test — AssertionError: the server's exit:",
      ...Array.from({ length: 6 }, (_, i) => `    child line ${i + 1}`),
      '    … 8 more line(s)',
      ...Array.from({ length: 6 }, (_, i) => `    child line ${i + 15}`),
    ]);
  });
});
