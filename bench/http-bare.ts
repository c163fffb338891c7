import Fastify from 'fastify';

/**
 * The HTTP bench's bare Fastify process: one route answering `{"ok":true}` on an instance with
 * nothing registered (default JSON body parser, no logger, no hooks), on PORT. What the
 * framework alone costs on this machine, in a process of its own like the service.
 */
const app = Fastify({ logger: false });
app.post('/noop', (_request, reply) => reply.send({ ok: true }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
