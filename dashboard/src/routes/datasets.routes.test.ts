import fs from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { DATASET_NAME, STORAGE_KEY } from './datasets.routes.js';

describe('dashboard dataset export form', () => {
  it('accepts exactly the dataset names and storage keys the public API accepts', () => {
    const schemas = (parse(fs.readFileSync('api/public/openapi.yaml', 'utf8')) as { components: { schemas: Record<string, { pattern: string }> } }).components.schemas;
    expect(DATASET_NAME.source).to.equal(schemas.DatasetName!.pattern);
    expect(STORAGE_KEY.source).to.equal(schemas.StorageKey!.pattern);
  });
});
