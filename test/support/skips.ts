import type { Context, Hook, Suite, Test } from 'mocha';
import { usingPostgres } from './database.js';

// The one way a test may be skipped: with a reason the runner prints. A root
// hook (test/support/hooks.ts) fails the run on any other pending test:
// it.skip, xit, describe.skip, an it() without a body, a bare this.skip().

/** Where a skip's reason shows: the reporter prints the title of a pending test. */
export const SKIP_MARK = ' (skipped: ';

const reasons = new WeakMap<Test, string>();

/** Skips the running test, printing `reason` with its title. Call it from the test itself, not from a hook. */
export function skipBecause(context: Context, reason: string): never {
  const test = context.test as Test | Hook | undefined;
  if (test?.type !== 'test') throw new Error('skipBecause(this, reason) belongs in a test, not a hook: skip each test, so each prints its reason.');
  if (!reason.trim()) throw new Error('skipBecause needs a reason to print.');
  reasons.set(test, reason);
  test.title += `${SKIP_MARK}${reason})`;
  context.skip();
}

let fastPass = false;

/** Declared by .mocharc.fast.json (test/support/fast-pass.ts): the pass that runs without services. */
export function declareFastPass(): void {
  fastPass = true;
}

/**
 * A test that needs PostgreSQL itself, not PGlite. The fast pass skips it,
 * printing why; any other run without TEST_DATABASE_URL fails, naming the
 * service to start.
 */
export function needsPostgres(context: Context, why: string): void {
  if (usingPostgres()) return;
  if (fastPass) skipBecause(context, `${why}; runs on PostgreSQL in npm run test:all`);
  throw new Error(`This test needs PostgreSQL (${why}): set TEST_DATABASE_URL (make test starts it with scripts/services/postgres.sh).`);
}

/** Every test of `suite` and below that mocha reported as pending without a reason. */
export function pendingWithoutReason(suite: Suite): string[] {
  const found = suite.tests.filter((test) => test.state === 'pending' && !reasons.has(test)).map((test) => test.fullTitle());
  return [...found, ...suite.suites.flatMap(pendingWithoutReason)];
}
