import type { Config } from '../../kernel/config/config.js';
import { isSupervisor, type Principal } from '../../features/auth/principal.js';

// Where the dashboard links to the three servers' API pages (`/docs`, Swagger UI).

export interface ApiPage {
  label: string;
  url: string;
  visible: (principal: Principal) => boolean;
}

/** The auth server serves the dashboard itself; the others at their configured URL, else on the dashboard's host at their port. */
export function apiPages(config: Pick<Config, 'dashboardUrl' | 'privateUrl' | 'publicUrl' | 'privatePort' | 'publicPort'>): ApiPage[] {
  const onDashboardHost = (port: number) => {
    const url = new URL(config.dashboardUrl);
    url.port = String(port);
    return url.origin;
  };
  const docsOf = (base: string) => `${base.replace(/\/+$/, '')}/docs`;
  return [
    { label: 'Public API', url: docsOf(config.publicUrl || onDashboardHost(config.publicPort)), visible: (p) => Boolean(p.workspace) },
    { label: 'Private API', url: docsOf(config.privateUrl || onDashboardHost(config.privatePort)), visible: (p) => Boolean(p.workspace && isSupervisor(p)) },
    { label: 'Auth API', url: '/docs', visible: () => true },
  ];
}
