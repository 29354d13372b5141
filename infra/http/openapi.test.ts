import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { loadOpenApi } from './openapi.js';

describe('loadOpenApi', () => {
  it('reads the JSON the build wrote beside a document, else the YAML', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-openapi-'));
    try {
      const yaml = path.join(dir, 'openapi.yaml');
      fs.writeFileSync(yaml, 'info: { title: from yaml }\npaths: {}\n');
      expect(loadOpenApi(pathToFileURL(yaml)).info).to.deep.equal({ title: 'from yaml' });
      fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify({ info: { title: 'from json' }, paths: {} }));
      expect(loadOpenApi(pathToFileURL(yaml)).info).to.deep.equal({ title: 'from json' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
