import type { Request, RequestHandler, Response } from 'express';
import type { Principal } from '../../features/auth/principal.js';
import type { AuditEntry, AuditTrail } from '../../features/audit/trail.js';
import type { ActorType } from '../../features/audit/store.js';
import { matchedOperationOf } from '../../infra/http/operations/serve.js';
import { currentTraceId } from '../../infra/telemetry/spans.js';
import { loggedPath } from '../../infra/http/request-log.js';
import { watchJsonAnswer } from '../../infra/http/json-answer.js';
import { onResponseClose } from '../../infra/http/response-close.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The outcome of a request whose client left before its answer was written (nginx's convention). */
export const CLIENT_CLOSED = 499;

/**
 * One audit record per state-changing request (any method but GET, HEAD and
 * OPTIONS) and per refused one (401, 403, any method), written when the
 * answer is known: on the documented operations of the three servers, and on
 * the dashboard's routes. The record names the operation, the actor, the
 * target and the outcome; never a body, a header or a secret parameter.
 */
export function auditRequests(trail: AuditTrail): RequestHandler {
  return (req, res, next) => {
    // Read while the request's span is active: by `close`, it may not be.
    const traceId = currentTraceId();
    let created: string | null = null;
    if (!SAFE_METHODS.has(req.method)) {
      watchJsonAnswer(res, (answer) => {
        if (answer.status === 201) created = createdIdOf(answer.body);
      });
    }
    onResponseClose(res, () => {
      const outcome = res.writableFinished ? res.statusCode : CLIENT_CLOSED;
      if (SAFE_METHODS.has(req.method) && outcome !== 401 && outcome !== 403) return;
      const entry = entryOf(req, res, outcome, created, traceId);
      if (entry) trail.record(entry);
    });
    next();
  };
}

/** Whom a request that authenticates no caller (a log-in) acted as, once it knows: its record names that user. */
export interface SignedInActor {
  userId: number;
  workspaceId: number | null;
}

export function auditAs(res: Response, actor: SignedInActor): void {
  res.locals.signedIn = actor;
}

/** The record of a request that reached an operation or a dashboard route; undefined for anything else (a 404 path). */
function entryOf(req: Request, res: Response, outcome: number, created: string | null, traceId: string | null): AuditEntry | undefined {
  const target = targetOf(req, res);
  if (!target) return undefined;
  const principal = res.locals.principal as Principal | undefined;
  const signedIn = res.locals.signedIn as SignedInActor | undefined;
  return {
    ...(signedIn && !principal ? { actor_type: 'user' as const, actor_user_id: signedIn.userId, actor_id: null } : actorOf(principal)),
    workspace_id: principal?.workspace?.id ?? signedIn?.workspaceId ?? null,
    action: target.action,
    method: req.method,
    path: loggedPath(req),
    ...resourceOf(target.template, target.params, target.secrets, created),
    outcome,
    request_id: req.id,
    trace_id: traceId,
    source_address: req.ip ?? req.socket.remoteAddress ?? null,
  };
}

interface Target {
  action: string;
  /** The path with its parameters as `{name}`. */
  template: string;
  secrets: ReadonlySet<string>;
  params: Record<string, string>;
}

/** The documented operation (its operationId), or the dashboard route (`dashboard:POST /tokens/:id/delete`). */
function targetOf(req: Request, res: Response): Target | undefined {
  const matched = matchedOperationOf(res);
  if (matched) return { action: matched.operation.operationId, template: matched.operation.path, secrets: matched.operation.secrets, params: matched.params };
  // An `extra` router (the dashboard) that handled the request keeps its mount path as baseUrl.
  if (!req.baseUrl) return undefined;
  const route = (req.route as { path?: unknown } | undefined)?.path;
  const path = typeof route === 'string' ? route : `/${req.path.split('/')[1] ?? ''}`;
  const params = (req.params ?? {}) as Record<string, string>;
  return { action: `${req.baseUrl.slice(1)}:${req.method} ${path}`, template: path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'), secrets: new Set(), params };
}

function actorOf(principal: Principal | undefined): Pick<AuditEntry, 'actor_type' | 'actor_user_id' | 'actor_id'> {
  if (!principal) return { actor_type: 'anonymous', actor_user_id: null, actor_id: null };
  const type: ActorType = principal.via === 'api_token' ? 'api_token' : principal.user.isService ? 'oauth_client' : 'user';
  // An API token's id is the number in its jti; an OAuth client's client_id is looked up when the record is written.
  const tokenId = type === 'api_token' ? String(principal.tokenData.jti ?? '').replace(/^api-token-/, '') : null;
  return { actor_type: type, actor_user_id: principal.user.id, actor_id: tokenId || null };
}

/**
 * What the request acted on: the resource a 201 created (its id), else the
 * one its last non-secret path parameter names, typed by the segment before
 * that parameter (`/api/deployment/{key}` → deployment).
 */
function resourceOf(template: string, params: Record<string, string>, secrets: ReadonlySet<string>, created: string | null): Pick<AuditEntry, 'resource_type' | 'resource_id'> {
  const segments = template.split('/').filter(Boolean);
  const isParameter = (segment: string) => /^\{.+\}$/.test(segment);
  if (created !== null) return { resource_type: [...segments].reverse().find((s) => !isParameter(s)) ?? null, resource_id: created };
  for (let i = segments.length - 1; i > 0; i--) {
    const name = segments[i]!.slice(1, -1);
    if (!isParameter(segments[i]!) || secrets.has(name) || params[name] === undefined) continue;
    const before = segments[i - 1]!;
    return { resource_type: isParameter(before) ? name : before, resource_id: params[name] };
  }
  return { resource_type: null, resource_id: null };
}

/** The id of a created resource in its answer: `id`, or the `id` of one object inside it (`{ token: { id } }`). */
function createdIdOf(body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const record = body as Record<string, unknown>;
  const scalar = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : null);
  if (scalar(record.id) !== null) return scalar(record.id);
  for (const value of Object.values(record)) {
    const nested = value && typeof value === 'object' && !Array.isArray(value) ? scalar((value as Record<string, unknown>).id) : null;
    if (nested !== null) return nested;
  }
  return null;
}
