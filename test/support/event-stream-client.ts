/** A session event as the public server sends it. */
export interface SentEvent {
  id?: string;
  event: string;
  data: { id: string; invocation_id: string; status: string; created_at: string };
}

/** An SSE client of a session's events: the events as they come, the last id seen, and the end of the stream. */
export async function openEventStream(url: string, token: string, lastEventId?: string) {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }, signal: controller.signal });
  const received: SentEvent[] = [];
  let lastId = lastEventId;
  let ended = false;
  let broken = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = parseEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (!event) continue;
          if (event.id) lastId = event.id;
          received.push(event);
        }
      }
    } catch {
      // Aborted by close(), or the connection cut before the server ended the answer.
      broken = !controller.signal.aborted;
    }
    ended = true;
  })();
  return {
    response,
    received,
    lastId: () => lastId,
    ended: () => ended,
    /** The server ended the answer, rather than the connection breaking or the client closing it. */
    endedCleanly: () => ended && !broken && !controller.signal.aborted,
    async close() {
      controller.abort();
      await reading;
    },
  };
}

export type EventStream = Awaited<ReturnType<typeof openEventStream>>;

/** One block of the stream as an invocation event; comments (heartbeats) and other events are not. */
function parseEvent(block: string): SentEvent | undefined {
  const fields = Object.fromEntries(block.split('\n').filter((line) => line && !line.startsWith(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
  if (fields.event !== 'invocation') return undefined;
  return { id: fields.id, event: fields.event, data: JSON.parse(fields.data!) };
}

/** The statuses the stream sent for one invocation, in order. */
export const statusesOf = (received: SentEvent[], id: string) => received.filter((sent) => sent.data.invocation_id === id).map((sent) => sent.data.status);
