import type { Db } from '../../infra/db/database.js';
import type { Principal } from '../auth/principal.js';
import { isStaff, isSupervisor } from '../auth/principal.js';
import { BadGatewayError, NotAllowedError, NotFoundError } from '../../kernel/errors/errors.js';
import type { WorkspacesStore } from '../identity/workspaces.store.js';
import { METRIC_CATALOG, metricByName, type MetricDefinition } from './catalog.js';
import { parseMetricRequest } from './params.js';
import { fillTemplate, labelMatchers } from './promql.js';
import type { PrometheusClient, QueryData } from './prometheus.js';

export interface MetricAnswer {
  metric: string;
  query: string;
  data: QueryData;
}

/**
 * The metric endpoints of the private server. Whatever the caller passes, the
 * query it runs carries `workspace="<the workspace the caller may read>"`,
 * decided here: a supervisor's own workspace, or the one a staff user names.
 */
export class MetricsQueryService {
  constructor(
    private readonly db: Db,
    private readonly stores: { workspaces: Pick<WorkspacesStore, 'liveByName'> },
    /** Undefined when PROMETHEUS_URL is empty: queries answer 502. */
    private readonly prometheus: PrometheusClient | undefined,
  ) {}

  list(principal: Principal): MetricDefinition[] {
    checkAccess(principal);
    return METRIC_CATALOG.map((metric) => structuredClone(metric));
  }

  async query(principal: Principal, name: string, query: Record<string, unknown>): Promise<MetricAnswer> {
    checkAccess(principal);
    const metric = metricByName(name);
    if (!metric) throw new NotFoundError(`No metric ${name}; GET /api/metric lists them.`);
    const request = parseMetricRequest(metric, query);
    const workspace = await this.scope(principal, request.workspace);
    const promql = fillTemplate(metric.metrics_query, labelMatchers([['workspace', workspace], ...request.labels]));
    if (!this.prometheus) throw new BadGatewayError('The metrics backend is not configured: the platform operator must set PROMETHEUS_URL.');
    const data = request.range ? await this.prometheus.range(promql, request.range) : await this.prometheus.instant(promql);
    return { metric: metric.name, query: promql, data };
  }

  /** The workspace whose series the caller reads. */
  private async scope(principal: Principal, named: string | undefined): Promise<string> {
    if (!isStaff(principal)) {
      const own = principal.workspace!.name;
      if (named !== undefined && named !== own) throw new NotAllowedError('Supervisors read the metrics of their own workspace only.');
      return own;
    }
    const name = named ?? principal.workspace!.name;
    if (!(await this.stores.workspaces.liveByName(this.db, name))) throw new NotFoundError(`No workspace ${name}.`);
    return name;
  }
}

/** Supervisors of the token's workspace, and staff users (whose token is bound to a workspace too). */
function checkAccess(principal: Principal): void {
  if (isStaff(principal)) return;
  if (!isSupervisor(principal)) throw new NotAllowedError('Only supervisors of the workspace and staff users may read metrics.');
}
