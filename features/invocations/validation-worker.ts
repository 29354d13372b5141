import { parentPort } from 'node:worker_threads';
import { checkBody, newValidators, type BodyCheck, type BodyVerdict } from './body-check.js';

// A thread serves one validation pool, so one platform.
const validators = newValidators();

/** The validation pool's task: says when the body's check starts, so that the deadline counts it and not the wait for a thread or the schema's compilation. */
export default function run(task: BodyCheck & { id: number }): BodyVerdict {
  return checkBody(task, validators, () => parentPort?.postMessage({ validationStarted: task.id }));
}
