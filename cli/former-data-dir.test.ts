import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { FORMER_DATA_DIR, formerDataDirNotice } from './former-data-dir.js';

describe('former data folder', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-former-'));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('tells how to move a former folder when the configured one is missing', () => {
    fs.mkdirSync(path.join(cwd, FORMER_DATA_DIR));
    const notice = formerDataDirNotice('./.didyma', cwd);
    expect(notice).to.contain(`mv ${FORMER_DATA_DIR} .didyma`);
    expect(notice).to.contain(`DIDYMA_DATA_DIR=${FORMER_DATA_DIR}`);
  });

  it('says nothing once the configured folder exists, or when it is the former one', () => {
    fs.mkdirSync(path.join(cwd, FORMER_DATA_DIR));
    expect(formerDataDirNotice(FORMER_DATA_DIR, cwd)).to.equal(undefined);
    fs.mkdirSync(path.join(cwd, '.didyma'));
    expect(formerDataDirNotice('./.didyma', cwd)).to.equal(undefined);
  });

  it('says nothing without a former folder', () => {
    expect(formerDataDirNotice('./.didyma', cwd)).to.equal(undefined);
  });
});
