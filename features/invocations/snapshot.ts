import { InputError } from '../../kernel/errors/errors.js';

/**
 * A PostgreSQL `pg_snapshot`: transactions below `xmin` are visible, those
 * from `xmax` on are not, and between them all but those in `xip` (in
 * progress when it was taken). The position of a session event stream.
 */
export interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  xip: bigint[];
}

/** `xmin:xmax:xip,…` as pg_snapshot prints it; bounded, as it comes back from clients. */
const SNAPSHOT_TEXT = /^(\d{1,20}):(\d{1,20}):((?:\d{1,20})(?:,\d{1,20}){0,1000})?$/;

/** The largest xid8. */
const MAX_XID8 = 2n ** 64n - 1n;

const notOurs = (why: string) => new InputError(`Last-Event-ID: not an id this stream sent (${why}).`);

/**
 * The snapshot a client sent back, checked as PostgreSQL's pg_snapshot input
 * checks it (xmin valid, xmin ≤ xmax, each xip in [xmin, xmax) and in
 * order), so a bad one is a 400 before the stream starts, never a stream
 * whose first read fails.
 */
export function parseSnapshot(text: string): Snapshot {
  const match = SNAPSHOT_TEXT.exec(text);
  if (!match) throw notOurs('expected xmin:xmax:xip');
  const [xmin, xmax] = [BigInt(match[1]!), BigInt(match[2]!)];
  const xip = match[3] ? match[3].split(',').map(BigInt) : [];
  if (xmin < 1n || xmax > MAX_XID8) throw notOurs('transaction ids out of range');
  if (xmin > xmax) throw notOurs('xmin is after xmax');
  xip.forEach((tx, index) => {
    if (tx < xmin || tx >= xmax) throw notOurs('an in-progress id outside [xmin, xmax)');
    if (index > 0 && tx < xip[index - 1]!) throw notOurs('in-progress ids out of order');
  });
  return { xmin, xmax, xip };
}

export const formatSnapshot = (snapshot: Snapshot): string => `${snapshot.xmin}:${snapshot.xmax}:${snapshot.xip.join(',')}`;

/** What pg_visible_in_snapshot(tx, snapshot) answers. */
export function visibleIn(tx: bigint, snapshot: Snapshot): boolean {
  return tx < snapshot.xmin || (tx < snapshot.xmax && !snapshot.xip.includes(tx));
}

/**
 * The snapshot that sees exactly what all of `snapshots` see: one read from
 * it finds every event that any of them has yet to see.
 */
export function commonSnapshot(snapshots: Snapshot[]): Snapshot {
  const xmin = snapshots.reduce((low, s) => (s.xmin < low ? s.xmin : low), snapshots[0]!.xmin);
  const xmax = snapshots.reduce((low, s) => (s.xmax < low ? s.xmax : low), snapshots[0]!.xmax);
  const xip = [...new Set(snapshots.flatMap((s) => s.xip).filter((tx) => tx >= xmin && tx < xmax))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { xmin, xmax, xip };
}
