import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { NotAllowedError, NotAuthenticatedError } from '../../kernel/errors/errors.js';
import type { Authenticator } from '../../features/identity/authenticator.js';
import { isStaff, isSupervisor, type Principal } from '../../features/auth/principal.js';
import { asGuard } from '../../infra/http/operations/routes.js';

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,4096})$/;

/** The bearer credential of a request; undefined when there is none or it is malformed. */
export function bearerOf(req: Request): string | undefined {
  return BEARER.exec(req.headers.authorization ?? '')?.[1];
}

/** The principal of an authenticated request (set by `authenticate`). */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new NotAuthenticatedError();
  return principal;
}

type Guard = (principal: Principal) => void;

const guards: Record<'any' | 'workspace' | 'supervisor' | 'staff', Guard> = {
  any: () => undefined,
  workspace: (p) => {
    if (!p.workspace) throw new NotAllowedError('This endpoint needs a token bound to a workspace: log in with `workspace`.');
  },
  supervisor: (p) => {
    guards.workspace(p);
    if (!isSupervisor(p)) throw new NotAllowedError('Only a supervisor of this workspace may do this.');
  },
  staff: (p) => {
    guards.workspace(p);
    if (!isStaff(p)) throw new NotAllowedError('Only staff users may do this.');
  },
};

/**
 * Shared by the three servers: authenticates the bearer credential, then
 * applies the guard, before the body is read (`workspace`: a workspace-bound token; `supervisor`;
 * `staff`: a staff user's workspace-bound token; `any`: an unbound token is enough).
 */
export function authenticate(authenticator: Authenticator) {
  return (need: keyof typeof guards): RequestHandler =>
    asGuard(async (req: Request, res: Response, next: NextFunction) => {
      try {
        const credential = bearerOf(req);
        if (!credential) throw new NotAuthenticatedError();
        const principal = await authenticator.authenticate(credential);
        // Known before the guard decides, so a refusal is recorded with its actor.
        res.locals.principal = principal;
        guards[need](principal);
        next();
      } catch (error) {
        next(error);
      }
    });
}

export type Authenticate = ReturnType<typeof authenticate>;
