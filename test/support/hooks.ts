import { closeSharedDatabase } from './database.js';

// Root hooks (loaded through .mocharc): release the shared database at the end.
export const mochaHooks = {
  async afterAll() {
    await closeSharedDatabase();
  },
};
