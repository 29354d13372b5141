import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Principal } from '../../features/auth/principal.js';
import { IDEMPOTENCY_KEY, requestFingerprint } from '../../features/idempotency/fingerprint.js';
import type { IdempotencyService } from '../../features/idempotency/service.js';
import { watchJsonAnswer } from '../../infra/http/json-answer.js';
import { InputError } from '../../kernel/errors/errors.js';
import { principalOf } from './authenticate.js';

/** Set on an answer repeated for a retry with the same Idempotency-Key. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Whose keys these are: each user's, and each API token's apart from its user's. */
export function principalName(principal: Principal): string {
  return principal.via === 'api_token' ? String(principal.tokenData.jti) : `user-${principal.user.id}`;
}

/**
 * Opts an operation in to the `Idempotency-Key` header, after its guards and
 * its request's check: `router.post(path, member, idempotent('createInvocation'), handler)`.
 * Without the header the request runs as before; with it, the first request
 * runs and its answer is kept when it is a success, a retry gets that answer
 * with `Idempotent-Replayed: true`; a failure frees the key.
 */
export function idempotencyKeys(service: IdempotencyService, logger: Logger) {
  return (operation: string): RequestHandler =>
    async (req, res, next) => {
      const key = req.headers['idempotency-key'];
      if (key === undefined) return next();
      // The document checks it too; this keeps an operation whose document forgot it as strict.
      if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
        throw new InputError('Idempotency-Key: must be 1 to 255 printable ASCII characters.', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }]);
      }
      const principal = principalOf(res);
      if (!principal.workspace) return next(); // the operation's guard asks for a workspace; without one there is no scope
      const scope = { workspaceId: principal.workspace.id, principal: principalName(principal), operation, key };
      const begun = await service.begin(scope, requestFingerprint(req.method, req.url, req.body));
      if (begun.replay) {
        res.setHeader(REPLAYED_HEADER, 'true');
        res.status(begun.replay.status).json(JSON.parse(begun.replay.body));
        return;
      }
      const { claim } = begun;
      // The answer as it went out: one that failed the document's check (tests) went out a 500, which frees the key.
      watchJsonAnswer(res, ({ status, body }) => {
        claim.finish({ status, body: JSON.stringify(body) ?? 'null' }).catch((error: unknown) => logger.warn({ err: error, reqId: req.id }, 'could not record the answer of an idempotency key; its lease will free it'));
      });
      next();
    };
}
