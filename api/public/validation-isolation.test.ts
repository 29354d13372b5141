import { startTestPlatform } from '../../test/support/platform.js';
import { FLOOD_SETTINGS, quietWhileValidationFloods } from '../../test/support/validation-flood.js';

describe('public server: one workspace flooding the validation threads stalls no one else', function () {
  this.timeout(240_000);
  const closing: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const c of closing.reverse()) await c.close();
  });

  it("serves a quiet workspace's checks and every /healthz within seconds while another floods the threads, and refuses the flood with 429 past its bound", async () => {
    const t = await startTestPlatform(FLOOD_SETTINGS);
    closing.push(t);
    await quietWhileValidationFloods(t, t.public, [t.auth, t.private, t.public], closing);
  });
});
