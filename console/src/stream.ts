import { ApiError, storedKey } from './api';

/*
 * Server-sent events over fetch(): EventSource cannot send an Authorization header, and the
 * key never goes in a URL. Reads the body as it arrives, splits it into events at blank
 * lines, and hands each `data:` to `onEvent` with its `id:`. Reconnects after a dropped stream,
 * waiting a little longer each time (up to 30 s), until `signal` aborts; each connection sends
 * `Last-Event-ID` (the last id read, or `lastEventId` to begin with), so that the server
 * replays what came while no stream was open.
 */

/** Longest line kept while waiting for its end: a stream that never ends a line is cut. */
const PENDING_CHARS_MAX = 4 * 1024 * 1024;
const RETRY_MS_MIN = 1_000;
const RETRY_MS_MAX = 30_000;

export interface StreamHandlers {
  readonly onEvent: (type: string, data: string, id: string | null) => void;
  readonly onState: (state: 'connecting' | 'open' | 'closed', detail?: string) => void;
}

export async function followStream(
  path: string,
  handlers: StreamHandlers,
  signal: AbortSignal,
  lastEventId: string | null = null,
): Promise<void> {
  let retryMs = RETRY_MS_MIN;
  const resume = { lastEventId };
  while (!signal.aborted) {
    handlers.onState('connecting');
    try {
      await readOnce(path, handlers, signal, resume);
      retryMs = RETRY_MS_MIN;
    } catch (error) {
      if (signal.aborted) break;
      if (error instanceof ApiError && error.status < 500) {
        handlers.onState('closed', error.message);
        return;
      }
    }
    if (signal.aborted) break;
    handlers.onState('connecting');
    await new Promise((resolve) => setTimeout(resolve, retryMs));
    retryMs = Math.min(retryMs * 2, RETRY_MS_MAX);
  }
  handlers.onState('closed');
}

async function readOnce(
  path: string,
  handlers: StreamHandlers,
  signal: AbortSignal,
  resume: { lastEventId: string | null },
) {
  const key = storedKey();
  if (key === null) throw new ApiError(401, 'missing_api_key', 'Sign in with an API key.', null);
  const headers: Record<string, string> = {
    authorization: `Bearer ${key}`,
    accept: 'text/event-stream',
  };
  if (resume.lastEventId !== null) headers['last-event-id'] = resume.lastEventId;
  const response = await fetch(path, {
    headers,
    cache: 'no-store',
    signal,
  });
  if (!response.ok || response.body === null) {
    throw new ApiError(
      response.status,
      'stream_refused',
      `The stream answered ${String(response.status)}.`,
      null,
    );
  }
  handlers.onState('open');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    pending += value;
    if (pending.length > PENDING_CHARS_MAX) throw new Error('An event too long to read.');
    let end = pending.indexOf('\n\n');
    while (end >= 0) {
      const id = dispatch(pending.slice(0, end), handlers);
      if (id !== null) resume.lastEventId = id;
      pending = pending.slice(end + 2);
      end = pending.indexOf('\n\n');
    }
  }
}

/** One event block: `event:`, `id:` and `data:` lines; comments (`:`) are heartbeats. */
function dispatch(block: string, handlers: StreamHandlers): string | null {
  let type = 'message';
  let id: string | null = null;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) type = line.slice(7);
    else if (line.startsWith('id: ')) id = line.slice(4);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (data.length > 0) handlers.onEvent(type, data.join('\n'), id);
  return id;
}
