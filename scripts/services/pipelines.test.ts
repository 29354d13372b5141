import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const DIR = path.dirname(new URL(import.meta.url).pathname);

describe('service scripts', () => {
  // Under pipefail, `grep -q` may close the pipe before the producer is done:
  // the producer dies of SIGPIPE and the pipeline fails although grep matched.
  it('never pipe into grep -q while pipefail is on', () => {
    const offenders = fs
      .readdirSync(DIR)
      .filter((name) => name.endsWith('.sh'))
      .flatMap((name) => {
        const text = fs.readFileSync(path.join(DIR, name), 'utf8');
        if (!/set -\w*o pipefail/.test(text)) return [];
        return text
          .split('\n')
          .map((line, index) => ({ line, at: `${name}:${index + 1}` }))
          .filter(({ line }) => /\|\s*grep\s+(-\w*q|--quiet)/.test(line))
          .map(({ at }) => at);
      });
    expect(offenders).to.deep.equal([]);
  });
});
