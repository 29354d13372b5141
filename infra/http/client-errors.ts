import type http from 'node:http';
import type { Duplex } from 'node:stream';

// Requests that never reach the app (headers over Node's limit, bytes that
// are not HTTP, a request that takes too long to arrive) get the error body
// of every other error, not Node's bare status line.

const ANSWERS: Record<string, { status: number; reason: string; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', code: 'headers_too_large', message: 'The request line and headers are too large: shorten the URL or the headers.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', code: 'request_timeout', message: 'The request took too long to arrive.' },
};
const MALFORMED = { status: 400, reason: 'Bad Request', code: 'bad_request', message: 'The request is not valid HTTP.' };

export function answerClientErrors(server: http.Server): void {
  // Sockets with a response being written: an answer there would land inside it.
  const answering = new WeakSet<Duplex>();
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    answering.add(request.socket);
    response.once('finish', () => answering.delete(request.socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A kept-alive socket whose earlier responses are complete still carries a whole answer.
    if (error.code === 'ECONNRESET' || !socket.writable || answering.has(socket)) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[error.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ message: answer.message, message_code: answer.code });
    socket.end(`HTTP/1.1 ${answer.status} ${answer.reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
