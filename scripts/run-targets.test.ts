import { expect } from 'chai';
import { devScrapeTargets } from './run-targets.js';

describe('make run: what its Prometheus scrapes', () => {
  const config = { bindHost: '127.0.0.1', privatePort: 8081, executorPort: 9464, metricsPort: undefined };

  it("scrapes the private server and the executor on the ports didyma dev uses", () => {
    expect(devScrapeTargets(config)).to.deep.equal([{ targets: ['127.0.0.1:8081', '127.0.0.1:9464'], labels: { didyma_run: 'dev' } }]);
  });

  it('follows DIDYMA_METRICS_PORT, and reaches a server bound to every address on loopback', () => {
    expect(devScrapeTargets({ ...config, metricsPort: 9100 })[0]!.targets).to.deep.equal(['127.0.0.1:9100', '127.0.0.1:9464']);
    expect(devScrapeTargets({ ...config, bindHost: '0.0.0.0' })[0]!.targets).to.deep.equal(['127.0.0.1:8081', '127.0.0.1:9464']);
    expect(devScrapeTargets({ ...config, bindHost: '::1' })[0]!.targets).to.deep.equal(['[::1]:8081', '[::1]:9464']);
  });
});
