import { declareFastPass } from './skips.js';

// Required by .mocharc.fast.json only: the pass that needs no service may skip the tests that need one.
declareFastPass();
