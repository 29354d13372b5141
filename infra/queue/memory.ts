import type { Listener, Ring, WorkQueue } from './queue.js';

/**
 * The in-process queue of the embedded default: a wake-up goes to the next
 * listener in turn, after the current task, as a broker's would.
 */
export class MemoryQueue implements WorkQueue {
  private readonly listeners: Array<(ring: Ring) => void> = [];
  private next = 0;

  ring(ring: Ring): void {
    setImmediate(() => {
      if (!this.listeners.length) return;
      this.next = (this.next + 1) % this.listeners.length;
      this.listeners[this.next]!(ring);
    });
  }

  async listen(onRing: (ring: Ring) => void): Promise<Listener> {
    this.listeners.push(onRing);
    return {
      stop: async () => {
        const index = this.listeners.indexOf(onRing);
        if (index >= 0) this.listeners.splice(index, 1);
      },
    };
  }

  healthy(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
  }
}
