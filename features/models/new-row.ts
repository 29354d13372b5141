import type { DeploymentRow } from '../deployments/store.js';
import type { ChainLink } from './payload.js';
import type { CompletePayload } from './registry-schemas.js';
import { retryPolicyOf } from './retry-policy.js';
import type { NewModelRow } from './store.js';

/** The schema fields a registration left to its registry: what a later copy of it derives again. */
export const SCHEMA_FIELDS = ['input_schema', 'output_schema'] as const;
export type SchemaField = (typeof SCHEMA_FIELDS)[number];

/** Where a registered link is served and what its registry said of it. */
export interface ServedBy {
  deployment: Pick<DeploymentRow, 'id' | 'deployment_key'>;
  registry: Record<string, unknown>;
}

/**
 * The row of one link of a registration: `link` as given (which schemas it
 * left out is recorded as `native_metadata.derived_schemas`), `complete` with
 * every schema filled; `createdBy` null when the platform registered it.
 */
export function newModelRow(link: ChainLink, complete: CompletePayload, served: ServedBy, workspaceId: number, createdBy: number | null): NewModelRow {
  const derived = SCHEMA_FIELDS.filter((field) => link.payload[field] === undefined);
  return {
    workspace_id: workspaceId,
    model_code: complete.model_code,
    version: complete.version,
    name: complete.name,
    description: complete.description,
    input_schema: complete.input_schema,
    output_schema: complete.output_schema,
    feedback_schema: complete.feedback_schema ?? null,
    realtime_execution: complete.realtime_execution ?? false,
    allow_download: complete.allow_download ?? false,
    need_context: complete.need_context ?? link.position > 0,
    retry_policy: retryPolicyOf(complete.retry_policy),
    model_card_file_id: complete.model_card_file_id,
    deployment_id: served.deployment.id,
    native_metadata: { deployment_key: served.deployment.deployment_key, registry: served.registry, ...(derived.length ? { derived_schemas: derived } : {}) },
    chain_position: link.position,
    created_by_id: createdBy,
  };
}
