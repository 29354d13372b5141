import type { Logger } from 'pino';

/** A controller, or a watch feeding controllers: what runs while this replica leads. */
export interface Loop {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The controllers of the leader. Starting runs in the background and retries
 * (the first list fails while the API restarts or the CRDs are not installed
 * yet) so the leader keeps renewing its lease meanwhile; ending waits for any
 * start in progress and stops every controller started.
 */
export class ControllerGroup {
  private controllers: Loop[] = [];
  private starting: Promise<void> | undefined;
  private active = false;

  constructor(
    private readonly make: () => Loop[],
    private readonly logger: Logger,
    private readonly onRunning: (running: boolean) => void,
  ) {}

  get running(): boolean {
    return this.controllers.length > 0;
  }

  begin(): void {
    this.active = true;
    this.starting = this.startRetrying();
  }

  async end(): Promise<void> {
    this.active = false;
    await this.starting;
    await this.stopAll();
  }

  private async startRetrying(): Promise<void> {
    for (let attempt = 1; this.active; attempt += 1) {
      const controllers = this.make();
      try {
        await Promise.all(controllers.map((controller) => controller.start()));
        this.controllers = controllers;
        this.onRunning(true);
        return;
      } catch (error) {
        await Promise.all(controllers.map((controller) => controller.stop()));
        this.logger.error({ err: error, attempt }, 'could not start the controllers (are the CRDs installed?); retrying');
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * attempt, 15_000)));
      }
    }
  }

  private async stopAll(): Promise<void> {
    const controllers = this.controllers;
    this.controllers = [];
    this.onRunning(false);
    await Promise.all(controllers.map((controller) => controller.stop()));
  }
}
