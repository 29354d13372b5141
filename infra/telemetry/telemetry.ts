/** What a process that started tracing can still do with it. */
export interface Telemetry {
  /** Sends the spans still buffered; the process calls it as it exits. */
  shutdown(): Promise<void>;
}
