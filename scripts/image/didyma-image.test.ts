import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { checkNodeRelease, OWNER_LABEL, runtimeStage, sourceOf, staleImages } from './didyma-image.mjs';

const ROOT = path.resolve('.');
const dockerfile = () => fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

describe('the local image recipe (scripts/image) read from the Dockerfile', () => {
  it("takes the runtime stage's entry point, user, working directory, environment and ports", () => {
    const { config } = runtimeStage(dockerfile());
    expect(config.Entrypoint).to.deep.equal(['node', 'bin/didyma.js']);
    expect(config.Cmd).to.deep.equal(['serve', 'all']);
    expect(config.User).to.equal('10001:10001');
    expect(config.WorkingDir).to.equal('/app');
    expect(config.Env).to.include.members(['NODE_ENV=production', 'DIDYMA_BIND_HOST=0.0.0.0', 'DIDYMA_DATA_DIR=/tmp/didyma']);
    expect(Object.keys(config.ExposedPorts)).to.deep.equal(['8080/tcp', '8081/tcp', '8082/tcp', '9464/tcp', '9465/tcp']);
  });

  it('finds every file the runtime stage copies: the work tree, its build output, production dependencies', () => {
    const { copies } = runtimeStage(dockerfile());
    const sources = copies.map((copy) => path.relative(ROOT, sourceOf(copy, ROOT, '/prod/node_modules')));
    expect(sources).to.deep.equal(['package.json', path.relative(ROOT, '/prod/node_modules'), 'dist', 'bin', 'crds']);
    for (const copy of copies.filter((c) => c.from === undefined)) expect(fs.existsSync(path.join(ROOT, copy.source)), copy.source).to.equal(true);
  });

  it("fills the image with a node of the base's release line, the one the project runs on", () => {
    const { nodeMajor } = runtimeStage(dockerfile());
    expect(nodeMajor).to.equal(Number(process.versions.node.split('.')[0]));
    expect(() => checkNodeRelease(nodeMajor, `v${nodeMajor}.1.0`)).to.not.throw();
    expect(() => checkNodeRelease(nodeMajor, 'v20.20.2')).to.throw(/base is node:24, but the node on PATH is v20.20.2/);
    expect(() => runtimeStage('FROM debian:bookworm-slim\n')).to.throw(/not an official Node image/);
  });

  it('refuses a runtime stage it cannot reproduce, instead of building a different image', () => {
    expect(() => runtimeStage('FROM node:20\nRUN apt-get install -y curl\n')).to.throw(/RUN is not supported/);
    expect(() => runtimeStage('FROM node:20 AS build\nFROM node:20\nCOPY --from=other /x /y\n')).to.not.throw();
    expect(() => sourceOf({ from: 'other', source: '/x', target: '/y', intoDirectory: false }, ROOT, '/prod')).to.throw(/unknown build output/);
  });
});

describe('pruning earlier local builds from the node', () => {
  const listing = [
    'REF                                TYPE                                      DIGEST        SIZE     PLATFORMS   LABELS',
    'didyma.local/didyma:new            application/vnd.oci.image.manifest.v1+json sha256:new    226.8MiB linux/amd64 -',
    'didyma.local/didyma:old            application/vnd.oci.image.manifest.v1+json sha256:old    226.8MiB linux/amd64 -',
    'didyma.local/pause:3.10            application/vnd.oci.image.manifest.v1+json sha256:pause  1.4MiB   linux/amd64 -',
    'sha256:aaa                         application/vnd.oci.image.manifest.v1+json sha256:old    226.8MiB linux/amd64 -',
    'sha256:bbb                         application/vnd.oci.image.manifest.v1+json sha256:pause  1.4MiB   linux/amd64 -',
    'sha256:ccc                         application/vnd.oci.image.manifest.v1+json sha256:new    226.8MiB linux/amd64 -',
  ].join('\n');

  it('removes the other builds and the references only they had, never the new build or the sandbox image', () => {
    expect(staleImages(listing, ['didyma.local/didyma:new'])).to.deep.equal(['didyma.local/didyma:old', 'sha256:aaa']);
  });

  it('keeps a build that containers still use (another run on the same node)', () => {
    expect(staleImages(listing, ['didyma.local/didyma:new', 'didyma.local/didyma:old'])).to.deep.equal([]);
  });

  it('keeps a build whose owner still runs (another run, before its pods start), and removes it once that run is gone', () => {
    const labelled = listing.replace(/(didyma:old .*) -$/m, `$1 io.cri-containerd.image=managed,${OWNER_LABEL}=4242`);
    expect(labelled).to.include(`${OWNER_LABEL}=4242`);
    expect(staleImages(labelled, ['didyma.local/didyma:new'], undefined, (pid) => pid === '4242')).to.deep.equal([]);
    expect(staleImages(labelled, ['didyma.local/didyma:new'], undefined, () => false)).to.deep.equal(['didyma.local/didyma:old', 'sha256:aaa']);
  });
});
