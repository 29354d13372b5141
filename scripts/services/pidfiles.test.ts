import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LIB = path.join(path.dirname(new URL(import.meta.url).pathname), 'lib.sh');

/** Runs a bash snippet with lib.sh loaded; its standard output. */
const withLib = (script: string): string => execFileSync('bash', ['-c', `source "${LIB}"; ${script}`], { encoding: 'utf8' }).trim();

describe('service pidfiles', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-pidfile-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('trust the process they were written for', () => {
    const answer = withLib(`spawn_daemon ${dir}/pid ${dir}/log sleep 30; pidfile_alive ${dir}/pid && echo alive; kill "$(pidfile_pid ${dir}/pid)"`);
    expect(answer).to.equal('alive');
  });

  // After a session's processes are killed, a later process may reuse a pid: it must be neither trusted nor stopped.
  it('do not trust a later process that reuses the pid', () => {
    const answer = withLib(`printf '%s\\n1\\n' "$$" >${dir}/pid; pidfile_alive ${dir}/pid || echo stranger`);
    expect(answer).to.equal('stranger');
  });
});
