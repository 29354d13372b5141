import { Client } from '../../test/support/http.js';
import { MODEL, type BenchModelServer } from './model-server.js';
import { expectOk, registerVersion, type Tenant } from './tenant.js';

// (10)'s two aliases of a tenant's version, through the platform's own API:
// `plain`, its policy 100% on the version, and `shadowed`, the same policy
// with a second version as its shadow. Sessions open on an alias; their
// predictions are posted on the version's routes, as a client's would be.

export const PLAIN_ALIAS = 'plain';
export const SHADOWED_ALIAS = 'shadowed';

export interface AliasTenant {
  headers: Record<string, string>;
  /** The path of a session's invocations, for the version the aliases point at. */
  invocationPath(sessionId: string): string;
  /** `n` fresh sessions opened on `alias`; their ids. */
  sessions(alias: typeof PLAIN_ALIAS | typeof SHADOWED_ALIAS, n: number): Promise<string[]>;
}

/** `tenant`'s version `version` behind both aliases; `shadowVersion` is registered on `model` (it must answer any version). */
export async function setUpAliases(
  urls: { private: string; public: string },
  tenant: Tenant,
  model: BenchModelServer,
  version: string,
  shadowVersion: string,
): Promise<AliasTenant> {
  const priv = new Client(urls.private);
  const pub = new Client(urls.public);
  const { token } = tenant;
  await registerVersion(priv, token, model, shadowVersion);
  const weights = [{ version, weight: 100 }];
  for (const [alias, shadows] of [
    [PLAIN_ALIAS, []],
    [SHADOWED_ALIAS, [shadowVersion]],
  ] as const) {
    await expectOk(priv.put(`/api/platform_model/${MODEL.name}/alias/${alias}`, { token, json: { version } }));
    await expectOk(priv.put(`/api/platform_model/${MODEL.name}/alias/${alias}/policy`, { token, json: { weights, shadows } }));
  }
  return {
    headers: tenant.headers,
    invocationPath: (sessionId) => `/api/model/${MODEL.name}/version/${version}/session/${sessionId}/invocation`,
    async sessions(alias, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await expectOk(pub.post(`/api/model/${MODEL.name}/alias/${alias}/session`, { token }))).body.id as string);
      return ids;
    },
  };
}
