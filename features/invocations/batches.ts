import type { Db } from '../../infra/db/database.js';
import { MicroBatch, isolatingFailures } from '../../infra/db/micro-batch.js';
import type { FoundInvocation, InvocationKey, InvocationsStore, QueuedInvocation } from './store.js';
import { invocationState, type AppendedInvocation } from './state.js';

// Batches in flight at once per kind. While they run, new calls gather into
// the next batch (group commit): a busy server sends one statement per batch
// instead of one per request, and wakes one database backend instead of many.
const IN_FLIGHT = 2;

type Found = FoundInvocation | undefined;

/**
 * The two statements of the public API's hot paths, batched across
 * concurrent requests: the append of a POST …/invocation and the read of a
 * GET …/invocation/{id}. Under light load a batch holds one call; a batch the
 * database refuses as a whole is retried one by one, so a bad item fails alone.
 */
export class InvocationBatches {
  private readonly appends: MicroBatch<QueuedInvocation, AppendedInvocation | undefined>;
  private readonly reads: MicroBatch<InvocationKey, Found>;

  constructor(db: Db, invocations: Pick<InvocationsStore, 'inSessionsOfUsers'>) {
    this.appends = new MicroBatch(
      isolatingFailures((rows: QueuedInvocation[]) => invocationState.appendQueued(db, rows)),
      { maxInFlight: IN_FLIGHT },
    );
    this.reads = new MicroBatch(
      isolatingFailures((keys: InvocationKey[]) => invocations.inSessionsOfUsers(db, keys)),
      { maxInFlight: IN_FLIGHT },
    );
  }

  /** Appends the row, QUEUED, to its OPEN session of its user and model; undefined when the session refuses it. */
  append(row: QueuedInvocation): Promise<AppendedInvocation | undefined> {
    return this.appends.add(row);
  }

  /** The user's session of the model and the invocation in it with its attempts; undefined when the session is not theirs. */
  read(key: InvocationKey): Promise<Found> {
    return this.reads.add(key);
  }
}
