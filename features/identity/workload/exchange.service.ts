import { decodeJwt } from 'jose';
import type { WorkloadGrant } from '../../../kernel/config/workload.js';
import { OAuthError } from '../../../kernel/errors/errors.js';
import type { LoginGuard } from '../../auth/login-guard.js';
import { permissionsFor } from '../../auth/principal.js';
import type { Subject, TokenService } from '../../auth/tokens.js';
import type { WorkspacesStore } from '../workspaces.store.js';
import type { Db } from '../../../infra/db/database.js';
import type { SubjectTokenKind, WorkloadIdentity } from './identity.js';
import type { WorkloadPrincipals } from './principals.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token' as const;

export interface TokenExchangeInput {
  grant_type?: string;
  subject_token?: string;
  subject_token_type?: string;
  requested_token_type?: string;
  /** The workspace's name, when the mappings grant the workload several. */
  audience?: string;
  /** `workspace:<name>`, the same choice as `audience`. */
  scope?: string;
  workspace?: string;
}

/** RFC 8693 §2.2.1, with the `scope` of a client-credentials answer. */
export interface TokenExchangeResponse {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

export interface TokenExchangeDeps {
  db: Db;
  workspaces: WorkspacesStore;
  tokens: TokenService;
  guard: LoginGuard;
  principals: WorkloadPrincipals;
  /** The kinds of subject token accepted, first match wins: the configured issuers, then ServiceAccount tokens. */
  kinds: SubjectTokenKind[];
}

/**
 * RFC 8693 token exchange at /o/token: a workload proves who it is with a
 * token its platform gave it, and gets a didyma access token in a workspace
 * its mappings name, for a service user of its own (as an OAuth
 * application's). Failed attempts count as failed client credentials do.
 */
export class TokenExchangeService {
  constructor(private readonly deps: TokenExchangeDeps) {}

  async exchange(input: TokenExchangeInput, clientAddress: string): Promise<{ response: TokenExchangeResponse; subject: Subject }> {
    const token = checkRequest(input);
    const unverified = claimsOf(token);
    const kind = this.deps.kinds.find((k) => k.accepts(unverified));
    if (!kind) throw new OAuthError(400, 'invalid_request', 'The subject_token was refused: it is not issued by a configured workload issuer.');
    const pass = await this.deps.guard.admit('oauth', kind.account(unverified), clientAddress);
    const identity = await kind.identify(token, unverified);
    const grant = chooseGrant(identity, workspaceAsked(input));
    const workspace = await this.deps.workspaces.liveByName(this.deps.db, grant.workspace);
    if (!workspace) throw new OAuthError(400, 'invalid_target', `The workspace "${grant.workspace}" of this workload's mapping does not exist.`);
    if (workspace.disabled) throw new OAuthError(400, 'invalid_target', 'The workspace of this workload is disabled.');
    const userId = await this.deps.principals.memberFor(identity, workspace.id, grant.role);
    await this.deps.guard.succeeded(pass);
    const permissions = permissionsFor(false, grant.role);
    const subject = { userId, workspace: { id: workspace.id, name: workspace.name }, permissions };
    const access = await this.deps.tokens.issueAccess(subject);
    const response = { access_token: access, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer' as const, expires_in: this.deps.tokens.accessTtlSeconds, scope: permissions.join(' ') };
    return { response, subject };
  }
}

function checkRequest(input: TokenExchangeInput): string {
  if (!input.subject_token) throw new OAuthError(400, 'invalid_request', 'subject_token is required.');
  if (input.subject_token_type !== JWT_TOKEN_TYPE) throw new OAuthError(400, 'invalid_request', `subject_token_type must be ${JWT_TOKEN_TYPE}.`);
  if (input.requested_token_type && input.requested_token_type !== ACCESS_TOKEN_TYPE) {
    throw new OAuthError(400, 'invalid_request', `Only an access token (${ACCESS_TOKEN_TYPE}) can be requested.`);
  }
  return input.subject_token;
}

function claimsOf(token: string): Record<string, unknown> {
  try {
    return decodeJwt(token);
  } catch {
    throw new OAuthError(400, 'invalid_request', 'The subject_token was refused: it is not a JWT.');
  }
}

/** The workspace the request names, by `audience`, `scope=workspace:<name>` or `workspace`. */
function workspaceAsked(input: TokenExchangeInput): string | undefined {
  const scoped = input.scope?.split(' ').find((s) => s.startsWith('workspace:'))?.slice('workspace:'.length);
  return input.audience || scoped || input.workspace || undefined;
}

function chooseGrant(identity: WorkloadIdentity, asked: string | undefined): WorkloadGrant {
  if (identity.grants.length === 0) throw new OAuthError(403, 'access_denied', `No mapping grants ${identity.label} a workspace.`);
  const grants = asked === undefined ? identity.grants : identity.grants.filter((g) => g.workspace === asked);
  if (grants.length === 0) throw new OAuthError(400, 'invalid_target', `No mapping grants ${identity.label} the workspace "${asked}".`);
  const workspaces = new Set(grants.map((g) => g.workspace));
  if (workspaces.size > 1) throw new OAuthError(400, 'invalid_target', `The mappings grant ${identity.label} several workspaces: name one as the audience.`);
  // Several mappings of one workspace: the highest role, as for a person in several groups.
  return grants.find((g) => g.role === 'supervisor') ?? grants[0]!;
}
