import { toInferenceRequest, type Tensor } from '../../infra/connectors/open-inference/tensors.js';
import type { DemoModel, InferenceRequestBody } from './demo-model.js';
import { IRIS_FEATURES, IRIS_SPECIES } from './iris-data.js';
import { IrisClassifier } from './iris-model.js';
import { irisRows } from './features.js';
import { BadInferenceRequest, ModelFailure } from './problems.js';
import { csvSummary } from './csv-summary.js';

const FEATURE_INPUTS = IRIS_FEATURES.map((name) => ({ name, datatype: 'FP64', shape: [-1] }));
const CLASSES = IRIS_SPECIES.join(',');

let fitted: IrisClassifier | undefined;

/**
 * The demo models, the classifier fitted on first use. Once per process is
 * enough: the data are fixed, so every fit gives the same model.
 */
export function demoModels(): readonly DemoModel[] {
  fitted ??= IrisClassifier.fit();
  return [irisClassifier(fitted), irisExplainer(fitted), alwaysFails, csvSummary];
}

const irisClassifier = (classifier: IrisClassifier): DemoModel => ({
  name: 'iris-classifier',
  version: '1',
  inputs: FEATURE_INPUTS,
  outputs: [
    { name: 'predicted_class', datatype: 'BYTES', shape: [-1] },
    { name: 'probabilities', datatype: 'FP64', shape: [-1, 3] },
  ],
  infer(request) {
    const predictions = irisRows(request.inputs).map((row) => classifier.predict(row));
    return {
      outputs: [
        { name: 'predicted_class', datatype: 'BYTES', shape: [predictions.length], data: predictions.map((p) => p.label) },
        { name: 'probabilities', datatype: 'FP64', shape: [predictions.length, 3], data: predictions.flatMap((p) => p.probabilities), parameters: { classes: CLASSES } },
      ],
    };
  },
});

const irisExplainer = (classifier: IrisClassifier): DemoModel => ({
  name: 'iris-explainer',
  version: '1',
  inputs: FEATURE_INPUTS,
  outputs: [
    { name: 'explained_class', datatype: 'BYTES', shape: [-1] },
    { name: 'contributions', datatype: 'FP64', shape: [-1, 4] },
    { name: 'intercept', datatype: 'FP64', shape: [-1] },
    { name: 'score', datatype: 'FP64', shape: [-1] },
  ],
  infer(request) {
    const subject = explainedFlowers(request);
    const explanations = subject.rows.map((row, i) => classifier.explain(row, subject.classes?.[i]));
    const n = explanations.length;
    return {
      outputs: [
        { name: 'explained_class', datatype: 'BYTES', shape: [n], data: explanations.map((e) => e.label) },
        { name: 'contributions', datatype: 'FP64', shape: [n, 4], data: explanations.flatMap((e) => e.contributions), parameters: { features: IRIS_FEATURES.join(',') } },
        { name: 'intercept', datatype: 'FP64', shape: [n], data: explanations.map((e) => e.intercept) },
        { name: 'score', datatype: 'FP64', shape: [n], data: explanations.map((e) => e.score) },
      ],
      parameters: { method: 'logistic regression weights times standardized features', explained: subject.source },
    };
  },
});

const alwaysFails: DemoModel = {
  name: 'always-fails',
  version: '1',
  inputs: [],
  outputs: [],
  infer() {
    throw new ModelFailure('always-fails fails on purpose: use it to test how errors are handled');
  },
};

interface ExplainedFlowers {
  rows: number[][];
  /** The classes the explained invocation predicted; the explainer's own prediction when unknown. */
  classes?: number[];
  source: 'context' | 'inputs';
}

/**
 * With a context, the flowers of the invocation being explained (its request
 * body, in any form the platform accepts) and the classes it answered;
 * otherwise the explainer's own inputs.
 */
function explainedFlowers(request: InferenceRequestBody): ExplainedFlowers {
  const explained = contextOf(request.parameters?.context).at(-1);
  if (!explained) return { rows: irisRows(request.inputs), source: 'inputs' };
  let rows: number[][];
  try {
    rows = irisRows(toInferenceRequest(explained.request).inputs);
  } catch (error) {
    throw new BadInferenceRequest(`the explained request cannot be read: ${(error as Error).message}`);
  }
  const classes = predictedClasses(explained.response);
  return { rows, classes: classes?.length === rows.length ? classes : undefined, source: 'context' };
}

/** `parameters.context`: JSON text as the platform sends it, or the array itself. */
function contextOf(value: unknown): Array<{ request: string; response: string }> {
  let context = value;
  if (typeof value === 'string') {
    try {
      context = JSON.parse(value);
    } catch {
      throw new BadInferenceRequest('parameters.context is not JSON');
    }
  }
  if (context === undefined || context === null) return [];
  const valid = Array.isArray(context) && context.every((entry) => typeof entry?.request === 'string' && typeof entry?.response === 'string');
  if (!valid) throw new BadInferenceRequest('parameters.context must be a list of {request, response} strings');
  return context as Array<{ request: string; response: string }>;
}

function predictedClasses(response: string): number[] | undefined {
  try {
    const outputs = (JSON.parse(response) as { outputs?: Tensor[] }).outputs;
    const labels = outputs?.find((output) => output.name === 'predicted_class')?.data;
    const classes = labels?.map((label) => IRIS_SPECIES.indexOf(label as (typeof IRIS_SPECIES)[number]));
    return classes && classes.every((index) => index >= 0) ? classes : undefined;
  } catch {
    return undefined;
  }
}
