import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { main, valueRows, withValuesTable } from './chart-readme.js';

const VALUES = `# Header of the file.

image:
  repository: example/didyma
  # Defaults to the chart's appVersion.
  tag: ""
# The servers.
servers:
  auth:
    # Replicas | pods.
    replicas: 2
    resources: &res
      requests: { cpu: 100m }
    spread:
      # One per node.
      - maxSkew: 1
  public:
    resources: *res
extra: {}   # Any other variable.
`;

describe('chart README values table (scripts/chart-readme.ts)', () => {
  it('has a row per leaf with its type, default and the comments around it', () => {
    expect(valueRows(VALUES)).to.deep.equal([
      { key: 'image.repository', type: 'string', default: '`example/didyma`', description: '' },
      { key: 'image.tag', type: 'string', default: '`""`', description: "Defaults to the chart's appVersion." },
      { key: 'servers', type: 'object', default: '', description: 'The servers.' },
      { key: 'servers.auth.replicas', type: 'integer', default: '`2`', description: 'Replicas \\| pods.' },
      { key: 'servers.auth.resources.requests', type: 'object', default: '`{"cpu":"100m"}`', description: '' },
      { key: 'servers.auth.spread', type: 'list', default: '`[{"maxSkew":1}]`', description: 'One per node.' },
      { key: 'servers.public.resources', type: 'object', default: '`{"requests":{"cpu":"100m"}}`', description: '' },
      { key: 'extra', type: 'object', default: '`{}`', description: 'Any other variable.' },
    ]);
  });

  it('replaces only what lies between the markers, and refuses a README without them', () => {
    const readme = withValuesTable('# Chart\n\n<!-- values-table:start -->\nold\n<!-- values-table:end -->\n\nAfter.\n', VALUES);
    expect(readme).to.match(/^# Chart\n\n<!-- values-table:start -->\n\| Key \| Type \| Default \| Description \|\n/);
    expect(readme).to.include('| `servers.auth.replicas` | integer | `2` | Replicas \\| pods. |\n');
    expect(readme).to.match(/\n<!-- values-table:end -->\n\nAfter\.\n$/);
    expect(() => withValuesTable('# Chart\n', VALUES)).to.throw(/lost its .* markers/);
  });

  it('is what `npm run docs:chart` writes from values.yaml now', () => {
    expect(main(['--check'], undefined, () => undefined), 'charts/didyma/README.md is stale: run `npm run docs:chart`').to.equal(0);
  });

  it('fails `npm run lint:chart` when values.yaml changed since the table was written, and docs:chart mends it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chart-readme-'));
    try {
      fs.writeFileSync(path.join(dir, 'values.yaml'), VALUES);
      fs.writeFileSync(path.join(dir, 'README.md'), withValuesTable('<!-- values-table:start -->\n<!-- values-table:end -->\n', VALUES));
      const root = pathToFileURL(`${dir}/`);
      const printed: string[] = [];
      expect(main(['--check'], root, (line) => printed.push(line))).to.equal(0);
      fs.writeFileSync(path.join(dir, 'values.yaml'), VALUES.replace('replicas: 2', 'replicas: 3'));
      expect(main(['--check'], root, (line) => printed.push(line))).to.equal(1);
      expect(printed.join('\n')).to.include('npm run docs:chart');
      expect(main([], root)).to.equal(0);
      expect(main(['--check'], root)).to.equal(0);
      expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8')).to.include('| `servers.auth.replicas` | integer | `3` |');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
