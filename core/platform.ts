import path from 'node:path';
import type { Config } from './config/config.js';
import { createLogger, type Logger } from './logging/logger.js';
import { createDatabase, type Db } from './db/database.js';
import { loadSigningKeys, type SigningKeys } from './auth/keys.js';
import { TokenService } from './auth/tokens.js';
import { Authenticator } from './auth/authenticator.js';
import { RateLimiter } from './auth/rate-limit.js';
import { LoginService } from './identity/login.service.js';
import { WorkspacesService } from './identity/workspaces.service.js';
import { ApiTokensService } from './identity/api-tokens.service.js';
import { OAuthApplicationsService } from './identity/oauth.service.js';
import { InvitationsService } from './identity/invitations.service.js';

export interface PlatformOptions {
  logger?: Logger;
  keys?: SigningKeys;
  db?: Db;
  now?: () => number;
}

/**
 * Everything a modelplane process shares, built once from the validated config:
 * logger, database, keys, token service, authenticator and the services.
 * Servers, the executor and the CLI receive it instead of building their own.
 */
export function createPlatform(config: Config, options: PlatformOptions = {}) {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? createLogger(config.logLevel);
  const db =
    options.db ??
    createDatabase({ url: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'db'), poolMax: config.databasePoolMax });
  const keys =
    options.keys ??
    loadSigningKeys({ privateKeyFile: config.jwtPrivateKeyFile, publicKeyFile: config.jwtPublicKeyFile, dataDir: config.dataDir });
  const tokens = new TokenService(
    keys,
    {
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
      accessTtlSeconds: config.accessTokenTtl,
      refreshTtlSeconds: config.refreshTokenTtl,
      cacheSize: config.tokenCacheSize,
    },
    now,
  );
  const windowMs = config.loginLimitWindow * 1000;
  const identity = {
    login: new LoginService({
      db,
      tokens,
      accountLimiter: new RateLimiter(config.loginLimitPerAccount, windowMs, now),
      clientLimiter: new RateLimiter(config.loginLimitPerClient, windowMs, now),
    }),
    workspaces: new WorkspacesService(db),
    apiTokens: new ApiTokensService(db, now),
    oauth: new OAuthApplicationsService(db),
    invitations: new InvitationsService(db, { ttlSeconds: config.invitationTtl, dashboardUrl: config.dashboardUrl }, now),
  };
  return {
    config,
    logger,
    db,
    keys,
    tokens,
    authenticator: new Authenticator(db, tokens, now),
    identity,
    now,
    async close() {
      // A database handed in (tests share one) belongs to whoever made it.
      if (!options.db) await db.destroy();
    },
  };
}

export type Platform = ReturnType<typeof createPlatform>;
