import type { Context } from 'mocha';
import { closeSharedDatabase } from './database.js';
import { pendingWithoutReason } from './skips.js';

// Root hooks (loaded through .mocharc): release the shared database at the end,
// and fail the run when a test was pending without a printed reason.
export const mochaHooks = {
  async afterAll(this: Context) {
    await closeSharedDatabase();
    const silent = pendingWithoutReason(this.test!.parent!);
    if (silent.length) {
      throw new Error(
        `${silent.length} pending test(s) without a reason; skip with skipBecause(this, reason) from test/support/skips.ts:\n` +
          silent.map((title) => `  pending without a reason: ${title}`).join('\n'),
      );
    }
  },
};
