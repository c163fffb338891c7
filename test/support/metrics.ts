import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Redis } from 'ioredis';
import { createServer } from '../../src/http/server.js';
import type { Store } from '../../src/store/store.js';
import { testServerConfig } from './http.js';

/**
 * Reading /metrics as Prometheus would: the text over HTTP, parsed into samples, so tests
 * check what a scrape sees rather than what a registry object holds.
 */
export interface Scrape {
  readonly text: string;
  /** The sample of `name` with exactly these labels; undefined when the scrape has none. */
  value(name: string, labels?: Readonly<Record<string, string>>): number | undefined;
  /** Every sample of `name`, whatever its labels. */
  samples(name: string): { labels: Record<string, string>; value: number }[];
  /** Names declared by `# TYPE` lines, with their type. */
  readonly types: ReadonlyMap<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseScrape(text: string): Scrape {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type?.[1] !== undefined && type[2] !== undefined) types.set(type[1], type[2]);
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = SAMPLE.exec(line);
    if (match?.[1] === undefined || match[3] === undefined) throw new Error(`bad line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) {
      if (key !== undefined && value !== undefined) labels[key] = value;
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  const sameLabels = (a: Record<string, string>, b: Readonly<Record<string, string>>) =>
    Object.keys(a).length === Object.keys(b).length &&
    Object.entries(b).every(([key, value]) => a[key] === value);
  return {
    text,
    types,
    value: (name, labels = {}) =>
      samples.find((sample) => sample.name === name && sameLabels(sample.labels, labels))?.value,
    samples: (name) =>
      samples
        .filter((sample) => sample.name === name)
        .map(({ labels, value }) => ({ labels, value })),
  };
}

export async function scrape(base: string): Promise<Scrape> {
  const response = await fetch(`${base}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${String(response.status)}`);
  return parseScrape(await response.text());
}

/**
 * A worker-role server (`serve --role worker`: health and metrics, no API) whose /metrics
 * carries the workers' registry after the server's, as serve.ts joins them.
 */
export async function startWorkerMetricsServer(
  store: Store,
  registry: Registry,
  redis: Redis | null = null,
): Promise<{ base: string; app: FastifyInstance }> {
  const app = createServer(testServerConfig(), { store, redis, healthOnly: true });
  // The same join as serve.ts: the server's text, then the workers' registry.
  app.addHook('onSend', async (request, _reply, payload) =>
    request.routeOptions.url === '/metrics' && typeof payload === 'string'
      ? `${payload}${await registry.metrics()}`
      : payload,
  );
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return { base, app };
}
