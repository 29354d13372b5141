import fs from 'node:fs';
import { expect } from 'chai';
import { groupsOf, specFiles, stopsSharedService } from './test-lanes.js';

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
      'api/public/invocations.test.ts': `it('queues')`,
      'scripts/services/pipelines.test.ts': `it('reads scripts/services', () => run('stop'))`,
    };
    expect(groupsOf(Object.keys(sources), (file) => sources[file]!)).to.deep.equal({
      cluster: ['test/integration/cluster-helm.test.ts'],
      integration: ['test/integration/mlserver.test.ts'],
      units: ['api/public/invocations.test.ts', 'scripts/services/pipelines.test.ts'],
      alone: ['test/integration/faults.test.ts'],
    });
  });

  it("covers every file of test:all once, with exactly this tree's service-stopping suites alone", () => {
    const { spec } = JSON.parse(fs.readFileSync('.mocharc.all.json', 'utf8')) as { spec: string[] };
    const files = specFiles(spec);
    const groups = groupsOf(files, (file) => fs.readFileSync(file, 'utf8'));
    expect([...groups.cluster, ...groups.integration, ...groups.units, ...groups.alone].sort()).to.deep.equal(files);
    expect(groups.alone).to.have.members(['test/integration/faults.test.ts', 'test/integration/queue-rabbitmq.test.ts', 'test/integration/metrics-prometheus.test.ts']);
    expect(groups.cluster).to.include('test/integration/cluster-helm.test.ts');
    expect(groups.integration).to.include('test/integration/kube-api.test.ts');
    expect(groups.units).to.include('scripts/test-lanes.test.ts');
  });
});
