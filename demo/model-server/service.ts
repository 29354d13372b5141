import { demoModels } from './models.js';
import type { DemoModel, InferenceRequestBody } from './demo-model.js';

export const SERVER_NAME = 'didyma-demo-model-server';

/** Answered 404 with the message. */
export class NotServedHere extends Error {}

/** Inference calls per model, keyed `model:version`: lets tests check that a model ran exactly once. */
export type DemoStats = Record<string, number>;

/** The Open Inference endpoints of the demo models, without the HTTP around them. */
export class DemoModelService {
  private readonly models: readonly DemoModel[];
  private readonly calls = new Map<string, number>();

  /** `version` serves every demo model under that version instead of "1" (tests need fresh model versions). */
  constructor(version?: string) {
    this.models = version ? demoModels().map((model) => ({ ...model, version })) : demoModels();
  }

  serverMetadata() {
    return { name: SERVER_NAME, version: '1', extensions: ['model_repository'] };
  }

  repositoryIndex() {
    return this.models.map((model) => ({ name: model.name, version: model.version, state: 'READY', reason: '' }));
  }

  modelMetadata(name: string, version?: string) {
    const model = this.find(name, version);
    return { name: model.name, versions: [model.version], platform: SERVER_NAME, inputs: model.inputs, outputs: model.outputs };
  }

  modelReady(name: string, version?: string) {
    return { name: this.find(name, version).name, ready: true };
  }

  /** Counted before it runs, so a failing call counts too. Throws BadInferenceRequest or ModelFailure. */
  infer(name: string, version: string | undefined, request: InferenceRequestBody) {
    const model = this.find(name, version);
    const key = `${model.name}:${model.version}`;
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
    const id = request.id === undefined ? {} : { id: request.id };
    return { model_name: model.name, model_version: model.version, ...id, ...model.infer(request) };
  }

  stats(): DemoStats {
    return Object.fromEntries(this.calls);
  }

  resetStats(): void {
    this.calls.clear();
  }

  /** Without a version: the model's only version, as the protocol allows. */
  private find(name: string, version: string | undefined): DemoModel {
    const model = this.models.find((m) => m.name === name && (version === undefined || m.version === version));
    if (!model) throw new NotServedHere(`model ${name}${version === undefined ? '' : ` version ${version}`} is not served here`);
    return model;
  }
}
