import type { HttpClient } from '../net/http-client.js';

export type RequestType = 'FEATURES' | 'PROMPT' | 'FEEDBACK' | 'OTHER';

/** One earlier exchange given to a model: the session's history, or the invocation an explainer explains. */
export interface ContextEntry {
  request: string;
  response: string;
}

export interface InferenceInput {
  modelCode: string;
  version: string;
  /** The invocation's `request.body`, as the user sent it. */
  body: string;
  requestType: RequestType;
  /** For `need_context` models and explainers, oldest first. */
  context?: ContextEntry[];
}

/** How a call may be stopped: an aborted signal aborts the request to the model server. */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface InferenceOutput {
  /** Stored as the invocation's response: JSON text. */
  response: string;
}

/** An input or output schema in the platform's shape: `{type: 'json', description, schema, fields?}`. */
export interface RegistrySchema {
  type: 'json';
  description: string;
  schema: Record<string, unknown>;
  fields?: Array<{ name: string; type: string; required: boolean }>;
}

/** What a registry's own description of a model version says of its input and output. */
export interface RegistrySchemas {
  input?: RegistrySchema;
  output?: RegistrySchema;
}

/** A model a registry offers for registration. */
export interface RegistryOffer {
  model_code: string;
  /** The one version it answers to; null when it takes any version name. */
  version: string | null;
  /** What the registry says of it: what `lookup` answers, and where its calls go. */
  registry: Record<string, unknown>;
}

/** Asks a model catalog whether it knows a model version. */
export interface RegistryConnector {
  /**
   * The registry's metadata for the pair, or null when the registry does not
   * know it. Throws UpstreamError when the registry cannot be asked.
   */
  lookup(modelCode: string, version: string): Promise<Record<string, unknown> | null>;
  /**
   * The schemas the registry records for a version it knows (an MLflow
   * signature), for a registration that gives none. Absent: the registry
   * records none. Throws UpstreamError when the registry cannot be asked.
   */
  schemasOf?(modelCode: string, version: string): Promise<RegistrySchemas>;
  /**
   * The models the registry offers for registration. Absent: the registry
   * does not list its models. Throws UpstreamError when it cannot be asked.
   */
  offered?(): Promise<RegistryOffer[]>;
  /** Resolves when the registry answers; throws UpstreamError otherwise. */
  health(): Promise<void>;
}

/** Runs a model version on the servers of a deployment. */
export interface ServerProxy {
  /** Throws UpstreamError when the model server fails, InputError when the body cannot be encoded for it. */
  infer(input: InferenceInput, options?: CallOptions): Promise<InferenceOutput>;
  health(): Promise<void>;
}

/** Validated init parameters: strings only, URLs normalized, empty values dropped. */
export type ConnectorInit = Readonly<Record<string, string>>;

export interface ConnectorDeps {
  /** Shared per process: it holds the URL policy and the keep-alive connections. */
  http: HttpClient;
  /** Named in every error, so an operator knows which deployment failed. */
  deploymentKey: string;
  /** The deployment's workspace: classes that read the cluster check what it may read (the KServe ones refuse without it). */
  workspace?: string;
}
