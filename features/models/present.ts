import type { ModelRow } from './store.js';
import { policyOfModel, type RetryPolicy } from './retry-policy.js';

export interface ModelMetadata {
  model_code: string;
  name: string;
  description: string;
  version: string;
  workspace: string;
  realtime_execution: boolean;
  allow_download: boolean;
  need_context: boolean;
  retry_policy: RetryPolicy;
  input_schema: object;
  output_schema: object;
  feedback_schema: object | null;
  native_metadata: object;
  serving?: ServingState;
  explainer_metadata?: ModelMetadata;
}

/** A serving platform's state of a model now (a KServe service as the process's watch last saw it). */
export interface ServingState {
  ready: boolean;
  not_ready_reason?: string;
  latest_ready_revision?: string;
}

export function presentModel(row: ModelRow, workspace: string): ModelMetadata {
  return {
    model_code: row.model_code,
    name: row.name,
    description: row.description,
    version: row.version,
    workspace,
    realtime_execution: row.realtime_execution,
    allow_download: row.allow_download,
    need_context: row.need_context,
    retry_policy: policyOfModel(row.retry_policy),
    input_schema: row.input_schema,
    output_schema: row.output_schema,
    feedback_schema: row.feedback_schema,
    native_metadata: row.native_metadata,
  };
}

/** A model with its explainer chain nested as `explainer_metadata`; `serving`, when given, the state of each link now. */
export function presentChain(chain: ModelRow[], workspace: string, serving: ReadonlyArray<ServingState | undefined> = []): ModelMetadata {
  const [head, ...rest] = chain;
  const metadata = presentModel(head!, workspace);
  if (serving[0]) metadata.serving = serving[0];
  if (rest.length) metadata.explainer_metadata = presentChain(rest, workspace, serving.slice(1));
  return metadata;
}
