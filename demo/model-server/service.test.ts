import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { ANY_VERSION, DemoModelService } from './service.js';

describe('demo model service: versions', () => {
  it('answers under whichever version is asked for when it serves any version', () => {
    const service = new DemoModelService(ANY_VERSION);
    expect(service.modelMetadata('iris-classifier', 'ws-7')).to.deep.include({ name: 'iris-classifier', versions: ['ws-7'] });
    const answer = service.infer('iris-classifier', 'ws-7', { inputs: [{ name: 'input-0', shape: [1, 4], datatype: 'FP64', data: [5.1, 3.5, 1.4, 0.2] }] });
    expect(answer).to.include({ model_name: 'iris-classifier', model_version: 'ws-7' });
    expect(service.stats()).to.deep.equal({ 'iris-classifier:ws-7': 1 });
    expect(() => service.modelMetadata('no-such-model', 'ws-7')).to.throw('not served here');
  });

  it('still serves one version only when given one', () => {
    expect(() => new DemoModelService('v2').modelMetadata('iris-classifier', 'ws-7')).to.throw('not served here');
  });
});

describe('demo model service: documented', () => {
  it('has every model it serves in the README table of demo models', async () => {
    const readme = await readFile('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### The demo models'));
    const served = new DemoModelService().repositoryIndex().map((model) => model.name);
    expect(served).to.have.length.greaterThan(3);
    for (const name of served) expect(section, name).to.include(`| \`${name}\` |`);
  });
});
