import { expect } from 'chai';
import { metadataSchemas, METADATA_BOUNDS } from '../../infra/connectors/open-inference/metadata-schemas.js';
import { compileSchema } from './json-schema.js';
import { checkIoSchema } from './payload.js';

describe('schemas a registry derives', () => {
  it("keep within a tenant schema's limits for the largest Open Inference metadata described", () => {
    const name = (i: number) => `${String(i).padStart(2, '0')}${'n'.repeat(METADATA_BOUNDS.nameLength - 2)}`;
    for (const shape of [[-1, 7], new Array(METADATA_BOUNDS.rank).fill(3), new Array(METADATA_BOUNDS.dimensions).fill(-1)]) {
      const tensors = Array.from({ length: METADATA_BOUNDS.tensors }, (_, i) => ({ name: name(i), datatype: 'UINT64', shape }));
      const { input, output } = metadataSchemas({ inputs: tensors, outputs: tensors });
      checkIoSchema(input!, 'input_schema', true);
      checkIoSchema(output!, 'output_schema', false);
      expect(() => compileSchema(input!.schema, 'input_schema.schema')).to.not.throw();
    }
  });
});
