import { BadGatewayError } from '../../kernel/errors/errors.js';
import { HttpStatusError, HttpTransportError } from '../net/errors.js';

export type UpstreamRole = 'model registry' | 'tracking server' | 'model server';

/** What kind of transient failure an upstream call met: what a model's retry policy chooses to retry (`retry_on`). */
export type FailureKind = 'unreachable' | 'timeout' | 'server_error';

export const FAILURE_KINDS: readonly FailureKind[] = ['unreachable', 'timeout', 'server_error'];

/**
 * A deployment's registry or model server could not be reached or failed
 * (502). `message` names the URL, for logs and the supervisor who configured
 * it; `publicMessage` does not, for what an invocation's user reads.
 */
export class UpstreamError extends BadGatewayError {
  readonly publicMessage: string;

  constructor(
    readonly deploymentKey: string,
    message: string,
    /** True when trying again later may succeed (unreachable, overloaded, timed out). */
    readonly transient: boolean,
    /** The status the upstream answered, when it answered. */
    readonly upstreamStatus?: number,
    publicMessage?: string,
    /** What exactly failed, for the logs only. */
    readonly diagnosis?: string,
    /** The kind of a transient failure, classified where the call failed. */
    readonly kind?: FailureKind,
  ) {
    super(message, [{ field: 'deployment_key', message: `deployment ${deploymentKey} failed` }]);
    this.publicMessage = publicMessage ?? withoutAddresses(message);
  }
}

/** A transport failure's kind: no connection at all is `unreachable`; an answer that took too long, `timeout`. */
const TRANSPORT_KINDS: Partial<Record<HttpTransportError['failure'], FailureKind>> = {
  connect: 'unreachable',
  connect_timeout: 'unreachable',
  dns: 'unreachable',
  refused_by_policy: 'unreachable',
  timeout: 'timeout',
};

// Refused by the outbound policy, refused by the host, no answer: one message, so that
// nobody can map which private addresses answer by registering URLs. The logs tell them apart.
const UNREACHABLE = 'could not be reached';
const FAILURES: Record<HttpTransportError['failure'], string | null> = {
  connect: null,
  connect_timeout: null,
  timeout: null,
  dns: null,
  refused_by_policy: null,
  too_large: 'its answer was too large',
  invalid_response: 'its answer was not valid',
  tls: 'TLS failed',
  aborted: 'the call was cancelled',
};

/** URLs and host:port pairs taken out of a text users read (the full text goes to the logs). */
export function withoutAddresses(text: string): string {
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '<url>')
    .replace(/\b(?:\d{1,3}(?:\.\d{1,3}){3}|[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*):\d{2,5}\b/gi, '<address>');
}

/** Runs one call to an upstream; client failures become UpstreamErrors naming the deployment. */
export async function callUpstream<T>(deploymentKey: string, role: UpstreamRole, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw asUpstreamError(error, deploymentKey, role);
  }
}

function asUpstreamError(error: unknown, deploymentKey: string, role: UpstreamRole): unknown {
  const subject = `Deployment "${deploymentKey}": the ${role}`;
  if (error instanceof HttpStatusError) {
    const told = `${subject} answered HTTP ${error.upstreamStatus}${error.excerpt ? `: ${withoutAddresses(error.excerpt)}` : ''}`;
    const transient = error.retryable !== 'never';
    return new UpstreamError(deploymentKey, `${subject} failed: ${error.message}`, transient, error.upstreamStatus, told, undefined, transient ? 'server_error' : undefined);
  }
  if (error instanceof HttpTransportError) {
    const failure = FAILURES[error.failure];
    const told = failure ? `${subject} failed: ${failure}` : `${subject} ${UNREACHABLE}`;
    const transient = error.retryable !== 'never';
    return new UpstreamError(deploymentKey, `${told}.`, transient, undefined, `${told}.`, error.message, transient ? (TRANSPORT_KINDS[error.failure] ?? 'unreachable') : undefined);
  }
  return error;
}

/** The upstream answered, but not in the shape its protocol promises. */
export function unexpectedAnswer(deploymentKey: string, role: UpstreamRole, what: string): UpstreamError {
  return new UpstreamError(deploymentKey, `Deployment "${deploymentKey}": the ${role} answered ${what}`, false);
}
