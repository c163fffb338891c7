import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assert, type Scope } from '../../core/index.js';
import type { OutboxEvent, Store } from '../../store/store.js';
import { authOf } from '../auth.js';
import { isIdOf } from '../../ids.js';
import { FEED_EVENT_TYPES, type EventHub } from '../event-hub.js';
import type { OperationId } from '../operation-docs/index.js';

/*
 * Stream Events: the caller's `authorization.approved` and `authorization.declined` events as
 * server-sent events (text/event-stream), as they are committed, for the console's Live page.
 * The key travels in the Authorization header (a fetch() with a streaming body: EventSource
 * cannot send one, and a key never goes in a URL). A comment line every `heartbeatMs` keeps
 * proxies from closing an idle stream; a client too slow to read is cut off rather than
 * buffered without bound; every stream ends when the server closes. A reconnecting client
 * sends `Last-Event-ID` (the SSE resume header): the events committed after it are written
 * first (at most REPLAY_ROWS_MAX), then the live ones, each id once.
 */

export interface EventStreamOptions {
  readonly hub: EventHub;
  /** Between two heartbeat comments. */
  readonly heartbeatMs: number;
  /** Where a resumed stream reads what it missed. */
  readonly store: Pick<Store, 'eventsAfter'>;
}

/** Events written to a resumed stream before the live ones: a visit's worth, not a history. */
const REPLAY_ROWS_MAX = 500;

/** A reader this far behind is disconnected (it may reconnect and read what comes next). */
const UNSENT_BYTES_MAX = 1024 * 1024;

const eventStreamRoute = {
  config: { requiredScope: 'transactions:read' },
  schema: {
    operationId: 'streamEvents' satisfies OperationId,
    tags: ['events'],
    response: {
      200: z.string().meta({
        description:
          'text/event-stream: `event: <type>`, `id: <event id>`, `data: <event>`. A `Last-Event-ID` request header (an event id) first replays the events after it (at most 500).',
      }),
    },
  },
} as const;

export function registerEventStreamRoutes(app: FastifyInstance, options: EventStreamOptions): void {
  assert(options.heartbeatMs > 0, 'a positive heartbeat interval');
  const open = new Set<() => void>();
  app.addHook('preClose', (done) => {
    options.hub.close();
    for (const end of [...open]) end();
    done();
  });
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/v1/events/stream', eventStreamRoute, (request, reply) => {
      const { scope } = authOf(request);
      const raw = reply.raw;
      // Subscribed before the answer starts: a refusal (too many streams) is an ordinary error body.
      let heartbeat: NodeJS.Timeout | null = null;
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        unsubscribe();
        if (heartbeat !== null) clearInterval(heartbeat);
        open.delete(end);
        // The connection goes with the stream: a client that stopped reading would otherwise
        // keep its half-closed socket, and the server's close waiting for it.
        raw.end();
        raw.destroy();
      };
      const write = (text: string): void => {
        if (ended) return;
        raw.write(text);
        if (raw.writableLength > UNSENT_BYTES_MAX) end();
      };
      const lastEventId = request.headers['last-event-id'];
      const feed = resumableFeed(isIdOf('event', lastEventId) ? lastEventId : null, write);
      const unsubscribe = options.hub.subscribe(scope, { send: feed.live });
      void reply.hijack();
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        // A stream's connection is its own: closed with the stream, never kept for another request
        // (a kept-alive socket of an ended stream would hold the server's close).
        connection: 'close',
        'request-id': request.id,
      });
      open.add(end);
      raw.write(': connected\n\n');
      // The database away: the stream goes on with the live events alone.
      feed.replay(options.store, scope).catch(() => undefined);
      heartbeat = setInterval(() => {
        write(': heartbeat\n\n');
      }, options.heartbeatMs);
      // The response's close: the client went (or the answer ended); the request's own fires
      // once its (empty) body is read.
      raw.on('close', end);
      raw.on('error', end);
    });
}

/**
 * A stream's events, each id once and in order: with a resume point, the live ones wait while
 * the ones missed since it are read and written.
 */
function resumableFeed(resumeAfter: string | null, write: (text: string) => void) {
  let held: OutboxEvent[] | null = resumeAfter === null ? null : [];
  let lastSent = resumeAfter ?? '';
  const send = (event: OutboxEvent): void => {
    if (event.id <= lastSent) return;
    lastSent = event.id;
    write(`event: ${event.type}\nid: ${event.id}\ndata: ${JSON.stringify(event.payload)}\n\n`);
  };
  return {
    live: (event: OutboxEvent): void => {
      if (held === null) send(event);
      else held.push(event);
    },
    replay: async (store: EventStreamOptions['store'], scope: Scope): Promise<void> => {
      if (resumeAfter === null) return;
      try {
        const missed = await store.eventsAfter(
          resumeAfter,
          FEED_EVENT_TYPES,
          [scope],
          REPLAY_ROWS_MAX,
        );
        for (const event of missed) send(event);
      } finally {
        for (const event of held ?? []) send(event);
        held = null;
      }
    },
  };
}
