import { OpenIdProvider } from '../../../infra/oidc/provider.js';
import type { OidcConnection } from '../../../kernel/config/oidc.js';
import { NotFoundError } from '../../../kernel/errors/errors.js';

/** The configured connections, and one client per provider, discovered at first use. */
export class SsoProviders {
  private readonly providers = new Map<string, OpenIdProvider>();

  constructor(
    readonly connections: OidcConnection[],
    private readonly timeoutSeconds: number,
  ) {}

  connection(id: string): OidcConnection {
    const connection = this.connections.find((c) => c.id === id);
    if (!connection) throw new NotFoundError(`No sign-in connection "${id}" is configured.`);
    return connection;
  }

  provider(connection: OidcConnection): OpenIdProvider {
    let provider = this.providers.get(connection.id);
    if (!provider) {
      const { issuer, clientId, clientSecret, scopes } = connection;
      provider = new OpenIdProvider({ issuer, clientId, clientSecret: clientSecret?.reveal(), scopes, timeoutSeconds: this.timeoutSeconds });
      this.providers.set(connection.id, provider);
    }
    return provider;
  }
}
