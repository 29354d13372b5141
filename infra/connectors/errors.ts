import { BadGatewayError } from '../../kernel/errors/errors.js';
import { HttpStatusError, HttpTransportError } from '../net/errors.js';

export type UpstreamRole = 'model registry' | 'model server';

/** A deployment's registry or model server could not be reached or failed (502). */
export class UpstreamError extends BadGatewayError {
  constructor(
    readonly deploymentKey: string,
    message: string,
    /** True when trying again later may succeed (unreachable, overloaded, timed out). */
    readonly transient: boolean,
    /** The status the upstream answered, when it answered. */
    readonly upstreamStatus?: number,
  ) {
    super(message, { deployment_key: deploymentKey });
  }
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
  if (error instanceof HttpStatusError) {
    return new UpstreamError(deploymentKey, `Deployment "${deploymentKey}": the ${role} failed: ${error.message}`, error.retryable !== 'never', error.upstreamStatus);
  }
  if (error instanceof HttpTransportError) {
    return new UpstreamError(deploymentKey, `Deployment "${deploymentKey}": the ${role} could not be reached: ${error.message}`, error.retryable !== 'never');
  }
  return error;
}

/** The upstream answered, but not in the shape its protocol promises. */
export function unexpectedAnswer(deploymentKey: string, role: UpstreamRole, what: string): UpstreamError {
  return new UpstreamError(deploymentKey, `Deployment "${deploymentKey}": the ${role} answered ${what}`, false);
}
