import type { Request, Response } from 'express';
import type { Platform } from '../../platform/platform.js';
import { preferredWait } from '../../infra/http/prefer.js';
import { releaseInFlightSlot } from '../../infra/http/limits.js';
import { onResponseClose } from '../../infra/http/response-close.js';
import { isFinal } from '../../features/invocations/waits.js';
import { principalOf } from '../shared/authenticate.js';

type SessionPath = readonly [modelCode: string, modelVersion: string, sessionId: string];

/**
 * `POST …/invocation`: 201 with the queued invocation, as without a
 * preference, unless the request prefers to wait (`Prefer: wait=N`, RFC 7240)
 * and the server has room for one more wait of its workspace. Then 200 with
 * the finished invocation when it finishes within N seconds (at most
 * DIDYMA_MAX_PREFER_WAIT_SECONDS), else 202 with the queued one, both with
 * `Preference-Applied: wait=N`. A wait never refuses: the invocation is
 * queued whatever happens to the wait.
 */
export async function createInvocation(platform: Platform, req: Request, res: Response, session: SessionPath): Promise<void> {
  const { invocations } = platform.services;
  const { maxSeconds, waits } = platform.predictionWaits;
  const principal = principalOf(res);
  const preferred = preferredWait(req.get('prefer'));
  const release = preferred === undefined || maxSeconds === 0 ? undefined : waits.take(principal.workspace!.id);
  if (!release) return void res.status(201).json(await invocations.invoke(principal, ...session, req.body));
  try {
    const seconds = Math.min(preferred!, maxSeconds);
    const { invocation, position } = await invocations.submit(principal, ...session, req.body);
    // Queued like any request; from here on it holds a wait slot, not a request slot.
    releaseInFlightSlot(res);
    const gone = new AbortController();
    onResponseClose(res, () => gone.abort());
    const end = seconds > 0 ? await waits.until(invocation.request.session_id, position, invocation.id, seconds * 1000, gone.signal) : 'given_up';
    // Read as a GET reads it; should the read fail, the queued invocation is still the answer: it was accepted.
    const finished =
      end === 'finished'
        ? await invocations.get(principal, ...session, invocation.id).catch((error: unknown) => void platform.logger.warn({ err: error, reqId: req.id }, 'could not read a finished invocation'))
        : undefined;
    res.setHeader('Preference-Applied', `wait=${seconds}`);
    if (finished && isFinal(finished.status)) res.status(200).json(finished);
    else res.status(202).json(invocation);
  } finally {
    release();
  }
}
