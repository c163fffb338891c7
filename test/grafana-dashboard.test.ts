import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisPrefix } from './support/http.js';
import { parseScrape, scrape, type Scrape } from './support/metrics.js';
import {
  forgetPrefixes,
  serverDatabase,
  startCliProcess,
  stopAll,
  waitFor,
  type Child,
} from './support/processes.js';

/**
 * docs/grafana/spendgate-dashboard.json cannot drift from the service: every metric its
 * PromQL names is served at /metrics by a real `spendgate serve` (the API and the workers in
 * one process, as `npm start` runs them, with the local Solana runtime), and every spendgate_
 * metric served has a panel and a row in docs/metrics.md; so does every metric the
 * alert rules beside it (spendgate-alerts.yml) name. A renamed metric fails here, not on an
 * operator's empty graph or an alert that can never fire.
 */
const DASHBOARD = new URL('../docs/grafana/spendgate-dashboard.json', import.meta.url);
const METRICS_DOC = new URL('../docs/metrics.md', import.meta.url);
const ALERTS = new URL('../docs/grafana/spendgate-alerts.yml', import.meta.url);
const START_MS_MAX = 150_000;

interface Target {
  readonly expr: string;
}
interface Panel {
  readonly type: string;
  readonly title: string;
  readonly datasource?: { readonly type: string; readonly uid: string };
  readonly targets?: readonly Target[];
  readonly panels?: readonly Panel[];
}
interface Dashboard {
  readonly schemaVersion: number;
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: {
    readonly list: readonly {
      readonly name: string;
      readonly type: string;
      readonly query: string | { readonly query: string };
    }[];
  };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads. Grafana's variables, label matchers, strings,
 * ranges and grouping lists go first; what is left are functions and aggregations (a name
 * before a parenthesis), keywords, numbers and metric names.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const match of bare.matchAll(/[A-Za-z_:][\w:]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi)) {
    const token = match[0];
    const next = bare.slice((match.index ?? 0) + token.length).trimStart();
    if (/^\d/.test(token) || KEYWORDS.has(token.toLowerCase()) || next.startsWith('(')) continue;
    names.push(token);
  }
  return names;
}

function panelsOf(panels: readonly Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...panelsOf(panel.panels ?? [])]);
}

/** Whether the scrape serves `name`: a sample, a declared family, or a histogram's series. */
function serves(scraped: Scrape, name: string): boolean {
  if (scraped.types.has(name) || scraped.samples(name).length > 0) return true;
  const histogram = /^(.*)_(?:bucket|sum|count)$/.exec(name)?.[1];
  return histogram !== undefined && scraped.types.get(histogram) === 'histogram';
}

describe('metricNames', () => {
  it('finds the metrics of an expression and nothing else', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{job=~"$job",route="/v1/x"}[$__rate_interval]))) / sum(rate(b_total[5m])) or vector(0)',
      ),
    ).toEqual(['a_bucket', 'b_total']);
    expect(metricNames('count(c{job=~"${job}"} == 0) without (instance)')).toEqual(['c']);
  });

  it('tells a served family from a missing one', () => {
    const scraped = parseScrape(
      '# HELP h_seconds h\n# TYPE h_seconds histogram\n# HELP g g\n# TYPE g gauge\ng 1\n',
    );
    expect(
      ['h_seconds_bucket', 'h_seconds_count', 'g', 'g_count', 'nope'].map((name) =>
        serves(scraped, name),
      ),
    ).toEqual([true, true, true, false, false]);
  });
});

describe('the Grafana dashboard', () => {
  const redisPrefix = testRedisPrefix();
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let server: Child;
  let base = '';

  beforeAll(async () => {
    database = await serverDatabase();
    server = startCliProcess(['serve'], {
      DATABASE_URL: database.url,
      SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
      REDIS_PREFIX: redisPrefix,
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    await waitFor(
      () => {
        base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(server.output())?.[1] ?? '';
        return base !== '' && server.output().includes('spendgate started');
      },
      START_MS_MAX,
      () => `the server did not start:\n${server.output()}`,
    );
  }, START_MS_MAX + 60_000);

  afterAll(async () => {
    await stopAll();
    await database.drop();
    await forgetPrefixes([redisPrefix]);
  });

  const panels = panelsOf(dashboard.panels);
  const exprs = panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  const variableQueries = dashboard.templating.list.flatMap((variable) =>
    variable.type === 'query'
      ? [typeof variable.query === 'string' ? variable.query : variable.query.query]
      : [],
  );

  it('is a dashboard of this Grafana generation, on a Prometheus data source of the user’s choice', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard.uid).toBe('spendgate-overview');
    const datasource = dashboard.templating.list.find((variable) => variable.name === 'datasource');
    expect([datasource?.type, datasource?.query]).toEqual(['datasource', 'prometheus']);
    const drawn = panels.filter((panel) => panel.type !== 'row');
    expect(drawn.length).toBeGreaterThan(0);
    for (const panel of drawn) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
    }
  });

  it('names only metrics the service serves, and shows every spendgate_ metric it serves', async () => {
    const scraped = await scrape(base);
    const used = new Set<string>();
    for (const expr of exprs) {
      const names = metricNames(expr);
      expect(names.length, expr).toBeGreaterThan(0);
      for (const name of names) used.add(name);
    }
    for (const query of variableQueries) {
      const metric = /^label_values\((\w+),\s*\w+\)$/.exec(query)?.[1];
      expect(metric, query).toBeDefined();
      if (metric !== undefined) used.add(metric);
    }
    expect([...used].filter((name) => !serves(scraped, name)).sort()).toEqual([]);
    const familiesUsed = new Set(
      [...used].map((name) => name.replace(/_(?:bucket|sum|count)$/, '')).concat([...used]),
    );
    const served = [...scraped.types.keys()].filter((name) => name.startsWith('spendgate_'));
    expect(served.filter((name) => !familiesUsed.has(name)).sort()).toEqual([]);
    // And docs/metrics.md lists each in its table, and nothing it does not serve.
    const section = readFileSync(METRICS_DOC, 'utf8');
    const listed = [...section.matchAll(/^\| `(spendgate_\w+)`/gm)].map((match) => match[1]);
    expect(listed.slice().sort()).toEqual(served.slice().sort());
  });

  it('alerts only on metrics the service serves, the reserves’ among them once they ran', async () => {
    const exprs = [...readFileSync(ALERTS, 'utf8').matchAll(/^\s*expr: (.+)$/gm)].map(
      (match) => match[1] ?? '',
    );
    expect(exprs.length).toBeGreaterThan(0);
    // The worker reconciles the local chain's reserves at its start.
    let scraped = await scrape(base);
    await waitFor(
      async () => {
        scraped = await scrape(base);
        return (
          scraped.value('spendgate_reserve_ratio', { mode: 'test', currency: 'SOL' }) !== undefined
        );
      },
      60_000,
      () => `no reserve ratio:\n${scraped.text}`,
    );
    for (const expr of exprs) {
      const names = metricNames(expr);
      expect(names.length, expr).toBeGreaterThan(0);
      expect(
        names.filter((name) => !serves(scraped, name)),
        expr,
      ).toEqual([]);
    }
    expect(scraped.value('spendgate_reserve_ratio', { mode: 'test', currency: 'SOL' })).toBe(1);
  });
});
