import { HttpTransportError } from './errors.js';
import { exchange } from './http-exchange.js';
import { Outbound, type Deadlines } from './outbound.js';
import type { UrlPolicy } from './url-policy.js';

/** What one POST came to: an answer (any status) or the reason there was none; `diagnosis`, for logs only, says more. */
export type DeliveryResult = { status: number; body: string } | { error: string; diagnosis?: string };

/** Messages name no URL: the caller knows where it sent the request. */
const LABEL = 'The receiver';

/** One wording for every refused address, so recorded errors cannot map which addresses are the platform's own. */
export const REFUSED_BY_POLICY = "The receiver's address is not one the platform may call (the outbound URL policy refuses private, loopback, link-local and the platform's own addresses); nothing was sent.";

/**
 * POSTs a body once, through the URL policy (checked before the request and,
 * for host names, at connect time on every address they resolve to), within
 * deadlines, and reports any answer, whatever its status: for senders that
 * keep their own schedule of retries, as webhook deliveries do.
 */
export class DeliveryClient {
  private readonly outbound: Outbound;

  constructor(
    private readonly options: { policy: UrlPolicy; deadlines: Deadlines; maxResponseBytes: number },
  ) {
    this.outbound = new Outbound({ deadlines: options.deadlines, lookupFor: (port) => options.policy.lookupFor(port) });
  }

  async post(target: string, headers: Record<string, string>, body: string): Promise<DeliveryResult> {
    const url = new URL(target);
    const denial = await this.options.policy.refusalOf(url);
    if (denial) return { error: REFUSED_BY_POLICY, diagnosis: denial };
    const payload = Buffer.from(body);
    try {
      const raw = await exchange({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'didyma-webhooks', ...headers },
        body: payload,
        outbound: this.outbound,
        maxResponseBytes: this.options.maxResponseBytes,
        label: LABEL,
      });
      return { status: raw.status, body: raw.body.toString('utf8') };
    } catch (error) {
      if (error instanceof HttpTransportError) return error.failure === 'refused_by_policy' ? { error: REFUSED_BY_POLICY, diagnosis: error.message } : { error: error.message };
      throw error;
    }
  }

  /** Cuts the requests still open; call when the process stops. */
  close(): void {
    this.outbound.close();
  }
}
