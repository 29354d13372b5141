import { parentPort } from 'node:worker_threads';
import { checkBody, compileVerdict, newValidators, type BodyCheck, type BodyVerdict, type SchemaCompile } from './body-check.js';

// A thread serves one validation pool, so one platform.
const validators = newValidators();

/** The validation pool's task: says when it starts, so that the deadline does not count the thread's own start. */
export default function run(task: (BodyCheck | SchemaCompile) & { id: number }): BodyVerdict {
  parentPort?.postMessage({ validationStarted: task.id });
  return 'compileOnly' in task ? compileVerdict(task) : checkBody(task, validators);
}
