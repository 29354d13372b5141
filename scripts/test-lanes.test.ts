import fs from 'node:fs';
import { expect } from 'chai';
import { chunks, groupsOf, relativeImports, specFiles, stopsSharedService, usesServices } from './test-lanes.js';

describe("make test's lanes (scripts/test-lanes.ts)", () => {
  it('tells a suite that stops or restarts a shared service from one that only uses it', () => {
    expect(stopsSharedService(`serviceScript('rabbitmq', 'stop');`)).to.equal(true);
    expect(stopsSharedService(`execFile('bash', [path.resolve('scripts/services', name + '.sh'), action]); service('postgres', 'restart');`)).to.equal(true);
    expect(stopsSharedService(`requireEnv('TEST_AMQP_URL', 'rabbitmq'); server.stop();`)).to.equal(false);
    expect(stopsSharedService(`it('stops the executor', () => kill(executor, 'stop'));`)).to.equal(false);
  });

  it('puts each file in one group: the cluster suite, the integration suites that stop services, the other integration suites, the tests beside the code', () => {
    const sources: Record<string, string> = {
      'test/integration/cluster-helm.test.ts': `it('installs the chart')`,
      'test/integration/faults.test.ts': `serviceScript('postgres', 'restart')`,
      'test/integration/mlserver.test.ts': `requireEnv('TEST_DATABASE_URL', 'postgres')`,
      'api/public/invocations.test.ts': `import { testDatabase } from '../../test/support/database.js';`,
      'test/support/database.ts': `const url = process.env.TEST_DATABASE_URL;`,
      'scripts/services/pipelines.test.ts': `it('reads scripts/services', () => run('stop'))`,
    };
    const tests = Object.keys(sources).filter((file) => file.endsWith('.test.ts'));
    expect(groupsOf(tests, (file) => sources[file])).to.deep.equal({
      cluster: ['test/integration/cluster-helm.test.ts'],
      integration: ['test/integration/mlserver.test.ts'],
      units: ['api/public/invocations.test.ts'],
      serviceFree: ['scripts/services/pipelines.test.ts'],
      alone: ['test/integration/faults.test.ts'],
    });
  });

  it("tells a test that uses a service's variable, through any depth of relative imports, from one that uses none", () => {
    expect(relativeImports('api/public/a.test.ts', `import x from '../../infra/x.js';\nimport { y } from "./y.js";\nimport 'chai';\nconst z = await import('../z.js');`)).to.deep.equal([
      'infra/x.ts',
      'api/public/y.ts',
      'api/z.ts',
    ]);
    const sources: Record<string, string> = {
      'a.test.ts': `import { b } from './lib/b.js';`,
      'lib/b.ts': `import { c } from './c.js'; import { a } from '../a.test.js';`,
      'lib/c.ts': `export const c = process.env.TEST_AMQP_URL;`,
      'd.test.ts': `import { b } from './lib/e.js'; import express from 'express';`,
      'lib/e.ts': `import { d } from '../d.test.js'; export const e = process.env.DIDYMA_PORT;`,
    };
    expect(usesServices('a.test.ts', (file) => sources[file])).to.equal(true);
    expect(usesServices('d.test.ts', (file) => sources[file])).to.equal(false);
  });

  it("covers every file of test:all once, with exactly this tree's service-stopping suites alone, and the service-free ones in the fast pass", () => {
    const { spec } = JSON.parse(fs.readFileSync('.mocharc.all.json', 'utf8')) as { spec: string[] };
    const files = specFiles(spec);
    const groups = groupsOf(files, (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined));
    expect([...groups.cluster, ...groups.integration, ...groups.units, ...groups.serviceFree, ...groups.alone].sort()).to.deep.equal(files);
    expect(groups.alone).to.have.members(['test/integration/faults.test.ts', 'test/integration/queue-rabbitmq.test.ts', 'test/integration/metrics-prometheus.test.ts']);
    expect(groups.cluster).to.include('test/integration/cluster-helm.test.ts');
    expect(groups.integration).to.include('test/integration/kube-api.test.ts');
    expect(groups.units).to.include.members(['infra/db/database.test.ts', 'api/public/invocations.test.ts']);
    expect(groups.serviceFree).to.include('kernel/config/config.test.ts');
    // Those run in the fast pass only.
    const fast = specFiles((JSON.parse(fs.readFileSync('.mocharc.fast.json', 'utf8')) as { spec: string[] }).spec);
    expect(groups.serviceFree.filter((file) => !fast.includes(file))).to.deep.equal([]);
  });

  it('splits the integration suites into runs of consecutive files, every file once, none empty', () => {
    const files = Array.from({ length: 22 }, (_, index) => `f${String(index).padStart(2, '0')}`);
    const runs = chunks(files, 3);
    expect(runs.map((run) => run.length)).to.deep.equal([8, 8, 6]);
    expect(runs.flat()).to.deep.equal(files);
    expect(chunks(['a', 'b'], 3)).to.deep.equal([['a'], ['b']]);
    expect(chunks([], 3)).to.deep.equal([]);
  });
});
