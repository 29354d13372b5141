import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { CompiledOperation } from './compile.js';
import { checkJsonAnswer } from '../json-answer.js';
import { detailOf } from './request.js';

// Tests run every server with DIDYMA_VALIDATE_RESPONSES=true: each JSON
// response is checked, as the client will read it, against the document's
// response for its status. A mismatch is a 500 and an error log line, so a
// test sees it at once. 5xx answers (database down, cluster refusing, load
// shed) may come from any operation and share the error body: not checked.

export function checkResponses(operation: CompiledOperation, req: Request, res: Response, logger: Logger): void {
  checkJsonAnswer(res, (answer) => {
    if (answer.status >= 500) return answer;
    const problem = responseProblem(operation, answer.status, answer.body);
    if (!problem) return answer;
    logger.error({ reqId: req.id, method: req.method, url: req.logUrl, status: answer.status, problem }, 'response does not match the OpenAPI document');
    return { status: 500, body: { message: 'Internal server error.', message_code: 'internal_error' } };
  });
}

function responseProblem(operation: CompiledOperation, status: number, body: unknown): string | undefined {
  const code = String(status);
  const rule = [code, `${code[0]}XX`, 'DEFAULT'].map((key) => operation.responses.get(key)).find((found) => found !== undefined);
  if (rule === undefined) return `status ${status} is not documented for ${operation.method.toUpperCase()} ${operation.path}`;
  if (rule === null || body === undefined) return undefined;
  if (rule(JSON.parse(JSON.stringify(body)))) return undefined;
  const detail = detailOf(rule.errors![0]!);
  return `${detail.field ?? '(body)'}: ${detail.message}`;
}
