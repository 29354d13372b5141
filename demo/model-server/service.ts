import { demoModels } from './models.js';
import type { DemoModel, InferenceRequestBody } from './demo-model.js';

export const SERVER_NAME = 'didyma-demo-model-server';
/** The `version` under which the demo models answer to any version. */
export const ANY_VERSION = '*';

/** Answered 404 with the message. */
export class NotServedHere extends Error {}

/** Inference calls per model, keyed `model:version`: lets tests check that a model ran exactly once. */
export type DemoStats = Record<string, number>;

/** The Open Inference endpoints of the demo models, without the HTTP around them. */
export class DemoModelService {
  private readonly models: readonly DemoModel[];
  private readonly calls = new Map<string, number>();
  private readonly anyVersion: boolean;

  /**
   * `version` serves every demo model under that version instead of "1" (tests need fresh model versions);
   * `*` serves them under whichever version is asked for (pairs are unique across workspaces, so many workspaces' models share one server).
   */
  constructor(version?: string) {
    this.anyVersion = version === ANY_VERSION;
    this.models = version && !this.anyVersion ? demoModels().map((model) => ({ ...model, version })) : demoModels();
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
    if (this.anyVersion && version !== undefined) {
      const named = this.models.find((m) => m.name === name);
      if (named) return { ...named, version };
    }
    const model = this.models.find((m) => m.name === name && (version === undefined || m.version === version));
    if (!model) throw new NotServedHere(`model ${name}${version === undefined ? '' : ` version ${version}`} is not served here`);
    return model;
  }
}
