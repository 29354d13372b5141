import type { Request } from 'express';
import { operationRoutes, type OperationRoutes } from '../../infra/http/operations/routes.js';
import type { Platform } from '../../platform/platform.js';
import { authenticate, bearerOf, principalOf } from '../shared/authenticate.js';
import { auditAs } from '../shared/audit.js';
import { pageOf, queryText, sendPage } from '../../infra/http/pagination.js';
import { collect, receiveFile } from '../../infra/http/multipart.js';
import { jwks } from '../../features/auth/keys.js';
import { NotAuthenticatedError } from '../../kernel/errors/errors.js';
import { isStaff } from '../../features/auth/principal.js';
import { TOKEN_EXCHANGE_GRANT } from '../../features/identity/workload/exchange.service.js';

const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';
const intParam = (value: unknown) => Number(value);
const optionalInt = (value: unknown) => (value === undefined ? undefined : Number(value));

/** The audit list's filters, as the document names them (it has coerced the integers). */
const auditFilterOf = (req: Request) => ({
  actorUserId: optionalInt(req.query.actor),
  action: queryText(req, 'action'),
  resourceType: queryText(req, 'resource_type'),
  resourceId: queryText(req, 'resource_id'),
  workspaceId: optionalInt(req.query.workspace_id),
});

/** Routes of the auth server; handlers only translate HTTP to service calls. */
export function authRoutes(platform: Platform): OperationRoutes {
  const { identity, config } = platform;
  const auth = authenticate(platform.authenticator);
  const router = operationRoutes();

  router.post('/api/auth/token/obtain', async (req, res) => {
    const { tokens, subject } = await identity.login.obtain(req.body, clientAddress(req));
    auditAs(res, { userId: subject.userId, workspaceId: subject.workspace?.id ?? null });
    res.json(tokens);
  });
  router.post('/api/auth/token/refresh', async (req, res) => {
    res.json(await identity.login.refresh(req.body.refresh));
  });
  // An expired or revoked token of ours reads as `valid: false`; one that is not ours is a 401.
  router.get('/api/auth/token/verify', async (req, res) => {
    const credential = bearerOf(req);
    if (!credential) throw new NotAuthenticatedError();
    const { valid, tokenData } = await platform.authenticator.inspect(credential);
    res.json({ valid, token_data: tokenData });
  });
  router.get('/api/auth/jwks.json', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(jwks(platform.keys));
  });
  router.post('/o/token', async (req, res) => {
    if (req.body.grant_type === TOKEN_EXCHANGE_GRANT) {
      const { response, subject } = await identity.workload.exchange(req.body, clientAddress(req));
      auditAs(res, { userId: subject.userId, workspaceId: subject.workspace?.id ?? null });
      res.json(response);
      return;
    }
    const basic = basicCredentials(req.headers.authorization);
    res.json(await identity.login.clientCredentials({ ...req.body, ...basic }, clientAddress(req)));
  });

  router.get('/api/auth/workspace', auth('any'), async (req, res) => {
    sendPage(req, res, await identity.workspaces.list(principalOf(res), pageOf(req)));
  });
  router.post('/api/auth/workspace', auth('staff'), async (req, res) => {
    res.status(201).json(await identity.workspaces.create(principalOf(res), req.body));
  });
  router.get('/api/auth/workspace/:workspaceId', auth('staff'), async (req, res) => {
    res.json(await identity.workspaces.get(intParam(req.params.workspaceId)));
  });
  router.put('/api/auth/workspace/:workspaceId', auth('staff'), async (req, res) => {
    res.status(202).json(await identity.workspaces.setDisabled(intParam(req.params.workspaceId), req.body.disabled));
  });
  router.delete('/api/auth/workspace/:workspaceId', auth('staff'), async (req, res) => {
    await identity.workspaces.remove(intParam(req.params.workspaceId));
    res.status(204).end();
  });
  router.get('/api/auth/workspace/:workspaceId/quota', auth('workspace'), async (req, res) => {
    res.json(await identity.workspaces.quota(principalOf(res), intParam(req.params.workspaceId)));
  });
  router.patch('/api/auth/workspace/:workspaceId/quota', auth('staff'), async (req, res) => {
    res.json(await identity.workspaces.setQuota(intParam(req.params.workspaceId), req.body));
  });
  router.put('/api/auth/workspace/:workspaceId/logo', auth('workspace'), async (req, res) => {
    const file = await receiveFile(req, 'logo', config.maxLogoBytes, collect);
    await identity.workspaces.saveLogo(principalOf(res), intParam(req.params.workspaceId), file.contentType, file.result);
    res.status(202).json({ message: 'Logo stored.', message_code: 'ok' });
  });
  router.get('/api/auth/workspace/:workspaceId/logo', auth('workspace'), async (req, res) => {
    const logo = await identity.workspaces.logo(principalOf(res), intParam(req.params.workspaceId));
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('X-Logo-Content-Type', logo.content_type);
    res.setHeader('Content-Disposition', 'attachment; filename="logo"');
    res.send(logo.data);
  });

  router.get('/api/auth/audit', auth('workspace'), async (req, res) => {
    sendPage(req, res, await platform.audit.list(principalOf(res), auditFilterOf(req), pageOf(req)));
  });

  router.post('/api/auth/sso/token', async (req, res) => {
    res.json(await identity.sso.redeemAppCode(req.body));
  });
  router.post('/api/auth/sso/device', async (req, res) => {
    res.json(await identity.sso.beginDeviceSignIn(req.body.connection, clientAddress(req)));
  });
  router.post('/api/auth/sso/device/token', async (req, res) => {
    const { tokens, subject } = await identity.sso.pollDeviceSignIn(req.body);
    auditAs(res, { userId: subject.userId, workspaceId: subject.workspace?.id ?? null });
    res.json(tokens);
  });
  router.get('/api/auth/sso/connection', auth('staff'), (_req, res) => {
    res.json(identity.sso.describe());
  });
  router.get('/api/auth/lockout/account/:email', auth('staff'), async (req, res) => {
    res.json(await identity.lockouts.state('account', String(req.params.email)));
  });
  router.delete('/api/auth/lockout/account/:email', auth('staff'), async (req, res) => {
    await identity.lockouts.lift('account', String(req.params.email));
    res.status(204).end();
  });
  router.get('/api/auth/lockout/client/:clientId', auth('staff'), async (req, res) => {
    res.json(await identity.lockouts.state('client', String(req.params.clientId)));
  });
  router.delete('/api/auth/lockout/client/:clientId', auth('staff'), async (req, res) => {
    await identity.lockouts.lift('client', String(req.params.clientId));
    res.status(204).end();
  });

  if (config.exposeTokenApi) mountTokenApi(router, platform, auth);

  router.post('/api/auth/invitation', auth('workspace'), async (req, res) => {
    res.status(201).json(await identity.invitations.invite(principalOf(res), req.body));
  });
  router.get('/api/auth/invitation', auth('workspace'), async (req, res) => {
    sendPage(req, res, await identity.invitations.listPending(principalOf(res), workspaceIdOf(req, principalOf(res)), pageOf(req)));
  });
  router.delete('/api/auth/invitation/id/:invitationId', auth('workspace'), async (req, res) => {
    await identity.invitations.revoke(principalOf(res), workspaceIdOf(req, principalOf(res)), intParam(req.params.invitationId));
    res.status(204).end();
  });
  router.get('/api/auth/invitation/:token', async (req, res) => {
    res.json(await identity.invitations.describe(String(req.params.token)));
  });
  router.post('/api/auth/invitation/:token/accept', auth('any'), async (req, res) => {
    res.json(await identity.invitations.accept(principalOf(res), String(req.params.token)));
  });
  router.post('/api/auth/register', async (req, res) => {
    res.status(201).json(await identity.invitations.register(req.body));
  });
  return router;
}

function mountTokenApi(router: OperationRoutes, platform: Platform, auth: ReturnType<typeof authenticate>) {
  const tokens = platform.identity.apiTokens;
  const ids = (req: Request) => [intParam(req.params.workspaceId), intParam(req.params.tokenId)] as const;
  router.get('/api/auth/workspace/:workspaceId/token', auth('workspace'), async (req, res) => {
    sendPage(req, res, await tokens.list(principalOf(res), intParam(req.params.workspaceId), pageOf(req)));
  });
  router.get('/api/auth/workspace/:workspaceId/token/:tokenId', auth('workspace'), async (req, res) => {
    res.json(await tokens.get(principalOf(res), ...ids(req)));
  });
  router.patch('/api/auth/workspace/:workspaceId/token/:tokenId', auth('workspace'), async (req, res) => {
    res.json(await tokens.setActive(principalOf(res), ...ids(req), req.body.is_active));
  });
  router.delete('/api/auth/workspace/:workspaceId/token/:tokenId', auth('workspace'), async (req, res) => {
    await tokens.remove(principalOf(res), ...ids(req));
    res.status(204).end();
  });
}

/** The workspace an invitation listing is about: the token's, or (staff) the one named. */
function workspaceIdOf(req: Request, principal: ReturnType<typeof principalOf>): number {
  const named = req.query.workspace_id === undefined ? undefined : Number(req.query.workspace_id);
  const workspaceId = named ?? principal.workspace!.id;
  if (!isStaff(principal) && named !== undefined && named !== principal.workspace?.id) return -1;
  return workspaceId;
}

/** RFC 6749 §2.3.1: client credentials may come as HTTP Basic instead of form fields. */
function basicCredentials(header: string | undefined): { client_id?: string; client_secret?: string } {
  const match = /^Basic ([A-Za-z0-9+/=]{1,1024})$/.exec(header ?? '');
  if (!match?.[1]) return {};
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return {};
  return { client_id: decodeURIComponent(decoded.slice(0, colon)), client_secret: decodeURIComponent(decoded.slice(colon + 1)) };
}
