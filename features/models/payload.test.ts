import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { chainOf, MAX_EXPLAINERS, type ModelPayload } from './payload.js';

/** A model with `explainers` explainers, each explaining the one before. */
function withExplainers(explainers: number): ModelPayload {
  const link = (depth: number): ModelPayload => ({ model_code: `m${depth}`, version: '1', name: 'm', description: '', input_schema: { type: 'json' }, output_schema: { type: 'json' }, model_card_file_id: '00000000-0000-0000-0000-000000000000', ...(depth < explainers ? { explainer: link(depth + 1) } : {}) });
  return link(0);
}

describe('a model payload read as its explainer chain', () => {
  it('refuses more than MAX_EXPLAINERS explainers, naming the field in its details', () => {
    expect(chainOf(withExplainers(MAX_EXPLAINERS))).to.have.length(MAX_EXPLAINERS + 1);
    let error: unknown;
    try {
      chainOf(withExplainers(MAX_EXPLAINERS + 1));
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(InputError);
    expect((error as InputError).details).to.deep.equal([{ field: 'explainer', message: `at most ${MAX_EXPLAINERS} explainers` }]);
  });
});
