import type { Config } from '../kernel/config/config.js';
import type { BootstrapResult } from '../features/identity/admin.js';

/** What `didyma admin bootstrap` and the first start of `didyma dev` say they made. */
export function describeBootstrap(result: BootstrapResult): string {
  const password = result.generatedPassword ? `password ${result.generatedPassword}  (generated: shown only now)` : 'password from DIDYMA_ADMIN_PASSWORD';
  return `staff user ${result.email} created, supervisor of workspace "${result.workspace}"; ${password}`;
}

/**
 * The password as the login example writes it inside single quotes: the
 * generated one itself, the variable that set it (expanded by the shell),
 * or a placeholder once it is no longer known.
 */
function passwordInExample(config: Config, result: BootstrapResult): string {
  if (result.generatedPassword) return result.generatedPassword;
  if (config.adminPassword) return `'"$DIDYMA_ADMIN_PASSWORD"'`;
  return '<password>';
}

/** Where the metric endpoints and the dashboard's charts read their figures from, or how to give them a source. */
function metricsSource(config: Config): string {
  if (config.prometheusUrl) return `from Prometheus at ${config.prometheusUrl} (GET /api/metric, the dashboard's Metrics page)`;
  return 'off: PROMETHEUS_URL is not set (`make run` starts a Prometheus and sets it: docs/metrics.md)';
}

/** Where everything runs and how to log in, printed once `didyma dev` has started. */
export function welcomeText(config: Config, servers: Array<{ name: string; url: string }>, result: BootstrapResult, demoUrl: string): string {
  const auth = servers.find((s) => s.name === 'auth')?.url ?? '';
  const forgotten = result.created || config.adminPassword ? [] : [`  (forgotten the password? stop didyma dev, then: npx didyma admin reset-password ${config.adminEmail})`];
  return [
    '',
    'didyma is running (dev mode, embedded defaults)',
    ...servers.map((s) => (s.name === 'metrics' ? `  metrics  ${s.url}/metrics` : `  ${s.name.padEnd(8)} ${s.url}   (health: ${s.url}/healthz, API: ${s.url}/openapi.json, to try: ${s.url}/docs)`)),
    `  executor in-process (health: http://${config.bindHost}:${config.executorPort}/healthz)`,
    `  demo model server ${demoUrl} (Open Inference Protocol: iris-classifier 1, iris-explainer 1)`,
    `  dashboard ${auth}/dashboard`,
    `  metric queries ${metricsSource(config)}`,
    '',
    result.created ? `First start: ${describeBootstrap(result)}` : `Sign in as ${config.adminEmail} (created at first start).`,
    'Log in (the dashboard takes the same e-mail and password):',
    `  curl -s ${auth}/api/auth/token/obtain -H 'content-type: application/json' \\`,
    `    -d '{"email":"${config.adminEmail}","password":"${passwordInExample(config, result)}","workspace":"default"}'`,
    ...forgotten,
    '',
  ].join('\n');
}
