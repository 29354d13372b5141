/** Workspaces remembered as served beyond those waiting; past it, the others are forgotten (as if never served). */
const REMEMBERED = 1000;

/**
 * Items waiting per workspace, handed out in turn: the next goes to the
 * waiting workspace served longest ago (one never served first, then the one
 * waiting longest), each workspace's own items in order of arrival. A
 * workspace with many waiting then delays another's by at most one item, and
 * one whose item just went through without waiting counts as served. Each
 * workspace may have at most `maxPerWorkspace` waiting.
 */
export class Turns<T> {
  /** Insertion order: the order in which workspaces began waiting. */
  private readonly lines = new Map<number, T[]>();
  /** When each workspace was last served, by a counter. */
  private readonly lastServed = new Map<number, number>();
  private served = 0;

  constructor(private readonly maxPerWorkspace: number) {}

  /** Adds an item to its workspace's line; false, and nothing added, when that line is full. */
  push(workspaceId: number, item: T): boolean {
    const line = this.lines.get(workspaceId);
    if (!line) this.lines.set(workspaceId, [item]);
    else if (line.length >= this.maxPerWorkspace) return false;
    else line.push(item);
    return true;
  }

  /** Notes that one of the workspace's items went through (without waiting, or by `shift`). */
  serve(workspaceId: number): void {
    this.lastServed.delete(workspaceId);
    this.lastServed.set(workspaceId, ++this.served);
    if (this.lastServed.size > this.lines.size + REMEMBERED) {
      for (const id of this.lastServed.keys()) if (!this.lines.has(id)) this.lastServed.delete(id);
    }
  }

  /** The next item in turn among the workspaces `eligible` allows, taken out of its line. */
  shift(eligible: (workspaceId: number) => boolean = () => true): T | undefined {
    let chosen: number | undefined;
    let oldest = Infinity;
    for (const workspaceId of this.lines.keys()) {
      const at = this.lastServed.get(workspaceId) ?? 0;
      if (at < oldest && eligible(workspaceId)) [chosen, oldest] = [workspaceId, at];
    }
    if (chosen === undefined) return undefined;
    const line = this.lines.get(chosen)!;
    const item = line.shift();
    if (!line.length) this.lines.delete(chosen);
    this.serve(chosen);
    return item;
  }

  /** Takes an item out of its line before its turn (it gave up waiting). */
  remove(workspaceId: number, item: T): void {
    const line = this.lines.get(workspaceId);
    const index = line?.indexOf(item) ?? -1;
    if (index < 0) return;
    line!.splice(index, 1);
    if (!line!.length) this.lines.delete(workspaceId);
  }

  /** Every waiting item, taken out. */
  drain(): T[] {
    const all = [...this.lines.values()].flat();
    this.lines.clear();
    return all;
  }
}
