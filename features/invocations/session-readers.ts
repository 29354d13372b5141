import type { ChangeFeed } from '../../infra/db/change-feed.js';
import type { Runner } from '../../infra/db/database.js';
import type { StreamFollower } from '../../infra/http/event-stream.js';
import { invocationEventsStore, type InvocationEvent } from './events.js';
import { commonSnapshot, formatSnapshot, parseSnapshot, visibleIn, type Snapshot } from './snapshot.js';

/** The reader of one session's events, shared by every stream of that session in this process. */
interface Reader {
  /** Each stream and the snapshot it has seen up to. */
  followers: Map<StreamFollower<InvocationEvent>, Snapshot>;
  unsubscribe: () => void;
  /** A change was announced (or a stream joined) since the last read began. */
  due: boolean;
  scheduled: boolean;
  reading: boolean;
}

/**
 * The event streams of this process, read per session: a stream follows the
 * announcements of its own session only (so changes in other sessions, of
 * other tenants, cost it nothing), and one database read serves every stream
 * of a session, each handed what its own snapshot has yet to see. While the
 * change notifications are down, each session with streams is read every
 * `pollMs`.
 */
export class SessionEventReaders {
  private readonly readers = new Map<string, Reader>();
  private poller: NodeJS.Timeout | undefined;
  /** Database reads made so far: what the tests count a wake-up's cost in. */
  reads = 0;

  constructor(
    private readonly db: Runner,
    private readonly changes: () => ChangeFeed,
    private readonly pollMs: number,
  ) {}

  /** Hands `follower` the session's events after `from`, then each change as it is announced; returns the stop. */
  follow(sessionId: string, from: Snapshot, follower: StreamFollower<InvocationEvent>): () => void {
    const reader = this.readers.get(sessionId) ?? this.open(sessionId);
    reader.followers.set(follower, from);
    this.wake(sessionId, reader);
    return () => {
      reader.followers.delete(follower);
      if (reader.followers.size || this.readers.get(sessionId) !== reader) return;
      reader.unsubscribe();
      this.readers.delete(sessionId);
      if (!this.readers.size) this.stopPolling();
    };
  }

  /** Sessions with a reader: what the tests see the streams' footprint in. */
  get sessions(): number {
    return this.readers.size;
  }

  private open(sessionId: string): Reader {
    const reader: Reader = { followers: new Map(), unsubscribe: () => undefined, due: false, scheduled: false, reading: false };
    reader.unsubscribe = this.changes().subscribeKey('invocations', sessionId, () => this.wake(sessionId, reader));
    this.readers.set(sessionId, reader);
    this.startPolling();
    return reader;
  }

  private wake(sessionId: string, reader: Reader): void {
    reader.due = true;
    if (reader.reading || reader.scheduled) return;
    reader.scheduled = true;
    // After the current turn of the event loop: the streams that join, or the wake-ups that come, in it share the read.
    setImmediate(() => void this.read(sessionId, reader));
  }

  private async read(sessionId: string, reader: Reader): Promise<void> {
    reader.scheduled = false;
    if (this.readers.get(sessionId) !== reader || !reader.due) return;
    reader.due = false;
    reader.reading = true;
    const followers = [...reader.followers];
    try {
      this.reads += 1;
      const from = formatSnapshot(commonSnapshot(followers.map(([, seen]) => seen)));
      const { snapshot, events } = await invocationEventsStore.since(this.db, sessionId, from);
      const next = parseSnapshot(snapshot);
      for (const [follower, seen] of followers) {
        if (!reader.followers.has(follower)) continue;
        reader.followers.set(follower, next);
        const items = events.filter((event) => !visibleIn(BigInt(event.tx), seen)).map(({ tx: _, ...event }) => event);
        follower.deliver({ position: snapshot, items });
      }
    } catch (error) {
      for (const [follower] of followers) if (reader.followers.has(follower)) follower.fail(error);
    } finally {
      reader.reading = false;
      if (reader.due) this.wake(sessionId, reader);
    }
  }

  private startPolling(): void {
    if (this.poller) return;
    this.poller = setInterval(() => {
      if (this.changes().isListening) return;
      for (const [sessionId, reader] of this.readers) this.wake(sessionId, reader);
    }, this.pollMs);
    this.poller.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poller);
    this.poller = undefined;
  }
}
