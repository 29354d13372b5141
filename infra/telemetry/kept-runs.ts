import { createContextKey, SpanStatusCode, trace, type Attributes, type Context, type SpanOptions } from '@opentelemetry/api';

const tracer = trace.getTracer('didyma');

/**
 * The attribute a span is started with to be recorded whatever its trace's
 * head decision was (KeepRequestedSampler); its value says why (`failed`,
 * `slow`), so that a reader of a trace holding that span alone knows the
 * sampler had dropped the rest.
 */
export const KEPT_ATTRIBUTE = 'didyma.trace.kept';

/** A run its trace's sampler did not record, as it ended. */
export interface UnrecordedRun {
  /** Its attributes when it started, and those annotated since (annotateSpan). */
  attributes: Attributes;
  durationMs: number;
  /** What it threw, if it did. */
  error?: unknown;
}

/** Why an unrecorded run is to be recorded after all (`failed`, `slow`), or undefined to leave it out. */
export type KeepRule = (run: UnrecordedRun) => string | undefined;

let keepRule: KeepRule | undefined;

/** Sets which runs of this process are recorded whatever their trace's head decision (undefined: none, the default). */
export function keepUnrecordedRuns(rule: KeepRule | undefined): void {
  keepRule = rule;
}

const PENDING = createContextKey('didyma.unrecorded-run');

/**
 * What an unrecorded consumer span would have held, kept aside until the run
 * ends: if the rule then asks for it, the span is made after the fact, with
 * the run's start time and its parent, so that it lands in the invocation's
 * own trace (the sampler's head decision came before the outcome was known).
 */
export class PendingRun {
  private readonly started = new Date();
  private readonly attributes: Attributes;
  private error: unknown;

  private constructor(
    private readonly rule: KeepRule,
    private readonly name: string,
    private readonly options: SpanOptions,
    private readonly parent: Context,
  ) {
    this.attributes = { ...options.attributes };
  }

  /** Set aside when a rule is set; undefined otherwise, at no cost. */
  static start(name: string, options: SpanOptions, parent: Context): PendingRun | undefined {
    return keepRule && new PendingRun(keepRule, name, options, parent);
  }

  /** The pending run that `context` runs in, if any. */
  static of(context: Context): PendingRun | undefined {
    return context.getValue(PENDING) as PendingRun | undefined;
  }

  /** `context` with this run pending in it, for annotateSpan to find. */
  within(context: Context): Context {
    return context.setValue(PENDING, this);
  }

  annotate(attributes: Attributes): void {
    Object.assign(this.attributes, attributes);
  }

  threw(error: unknown): void {
    this.error = error;
  }

  /** Records the run now if the rule asks for it. */
  end(): void {
    const reason = this.rule({ attributes: this.attributes, durationMs: Date.now() - this.started.getTime(), error: this.error });
    if (!reason) return;
    const span = tracer.startSpan(this.name, { ...this.options, startTime: this.started, attributes: { ...this.attributes, [KEPT_ATTRIBUTE]: reason } }, this.parent);
    if (this.error !== undefined) {
      span.recordException(this.error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (this.error as Error).message });
    }
    span.end();
  }
}
