import type { Tensor } from '../../infra/connectors/open-inference/tensors.js';

export interface TensorMetadata {
  name: string;
  datatype: string;
  shape: number[];
}

/** The parts of an inference request a demo model reads. */
export interface InferenceRequestBody {
  id?: unknown;
  inputs?: unknown;
  parameters?: Record<string, unknown>;
}

export interface DemoModel {
  name: string;
  version: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
  /** Throws BadInferenceRequest (400) or ModelFailure (500). */
  infer(request: InferenceRequestBody): { outputs: Tensor[]; parameters?: Record<string, unknown> };
}
