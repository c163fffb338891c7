import autocannon from 'autocannon';
import { KeepAliveSockets, postRequest } from './keep-alive-sockets.js';

/**
 * The HTTP bench's load generators, both timing every request themselves to the microsecond
 * (autocannon's own histogram keeps whole milliseconds: 2.9 ms reads as 2, which would judge
 * a 2.5 ms target wrongly):
 *
 * - closed loop (`runClosedLoop`): autocannon, N connections each sending its next request as
 *   soon as the last is answered; saturating with 64, one at a time with 1;
 * - open loop (`runOpenLoop`): requests sent on a schedule whatever the answers, Poisson
 *   arrivals (exponential gaps, as independent cardholders send; fixed gaps on request),
 *   latency counted from the scheduled time (so a stall is not hidden by requests not sent
 *   meanwhile).
 *   autocannon's `overallRate` is not this: it gives each connection a quota per second, sent
 *   back to back at the start of each second, then records with a 1 ms "expected interval".
 */

/** What a load generator sends: POST `path` with a new body each time. */
export interface Target {
  /**
   * The server, or several (a fleet's processes): the closed loop gives connection i the url
   * i mod their number (autocannon's round-robin), the open loop takes one.
   */
  readonly url: string | readonly string[];
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * A body with its own id (a networkTransactionId), never sent before; `headers`, if any, are
   * added to the target's for this request alone (a processor's signature over the body), and
   * `path`, if any, replaces the target's (a message to an authorization's own path). Only the
   * closed loop sends them.
   */
  nextBody(): {
    readonly id: string;
    readonly body: string;
    readonly headers?: Readonly<Record<string, string>>;
    readonly path?: string;
  };
}

/** Latency samples in milliseconds, bounded in memory. */
export class LatencySamples {
  readonly #samplesMs: Float64Array;
  #count = 0;
  /** Samples past the capacity, not kept. */
  dropped = 0;

  constructor(capacity: number) {
    this.#samplesMs = new Float64Array(capacity);
  }

  get count(): number {
    return this.#count;
  }

  record(ms: number): void {
    if (this.#count < this.#samplesMs.length) {
      this.#samplesMs[this.#count] = ms;
      this.#count += 1;
    } else {
      this.dropped += 1;
    }
  }

  /** The share of the samples over `ms`; NaN without samples. */
  shareOver(ms: number): number {
    if (this.#count === 0) return Number.NaN;
    let over = 0;
    for (let index = 0; index < this.#count; index += 1) {
      if ((this.#samplesMs[index] ?? 0) > ms) over += 1;
    }
    return over / this.#count;
  }

  /** p50, p99, p99.9 and the largest, in milliseconds; NaN without samples. */
  summary(): {
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly p999Ms: number;
    readonly maxMs: number;
  } {
    const sorted = this.#samplesMs.slice(0, this.#count).sort();
    return {
      p50Ms: percentileMs(sorted, 0.5),
      p99Ms: percentileMs(sorted, 0.99),
      p999Ms: percentileMs(sorted, 0.999),
      maxMs: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] ?? Number.NaN),
    };
  }
}

/** The nearest-rank percentile of ascending samples: the smallest with `fraction` at or below. */
export function percentileMs(sortedMs: Float64Array, fraction: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(fraction * sortedMs.length));
  return sortedMs[Math.min(sortedMs.length, rank) - 1] ?? Number.NaN;
}

/** Answers seen by a load generator, classified by their body. */
export class Tally {
  readonly latencies: LatencySamples;
  /**
   * Each decision's own `decidedInMicros`, in ms: the authorize handler's time, from its start
   * to the outcome (the store's batch and its wait for a lane). Why: with the client's latency
   * and the service's request histogram, it says whether time over a bound went in the store's
   * path or around it (HTTP, hooks, the event loop).
   */
  readonly decidedMs: LatencySamples;
  /** Ids sent and not (yet) answered: requests cut off when a run stopped, or lost. */
  readonly inFlight = new Set<string>();
  ok = 0;
  non200 = 0;
  /** Connection errors and timeouts. */
  errors = 0;
  approved = 0;
  declined = 0;
  standIn = 0;
  /** `{"ok":true}`: a no-op route's answer. */
  noop = 0;
  /** A 200 whose body is neither a decision nor the no-op's answer. */
  unexpected = 0;
  /** A few answers worth showing (non-200s, declines), at most SAMPLES_SHOWN. */
  readonly samples: string[] = [];

  constructor(samplesMax: number) {
    this.latencies = new LatencySamples(samplesMax);
    this.decidedMs = new LatencySamples(samplesMax);
  }

  answer(status: number, body: string): void {
    if (status !== 200) {
      this.non200 += 1;
      this.#sample(`${status} ${body}`);
      return;
    }
    this.ok += 1;
    if (body === '{"ok":true}') {
      this.noop += 1;
    } else if (body.includes('"approved":true')) {
      this.approved += 1;
      this.#decided(body);
    } else if (body.includes('"approved":false')) {
      this.declined += 1;
      this.#decided(body);
      if (body.includes('"standIn":true')) this.standIn += 1;
      this.#sample(`declined ${body}`);
    } else {
      this.unexpected += 1;
      this.#sample(`unexpected ${body}`);
    }
  }

  #decided(body: string): void {
    const micros = DECIDED_IN_MICROS.exec(body)?.[1];
    if (micros !== undefined) this.decidedMs.record(Number(micros) / 1000);
  }

  #sample(text: string): void {
    if (this.samples.length < SAMPLES_SHOWN) this.samples.push(text.slice(0, 300));
  }
}

const SAMPLES_SHOWN = 5;
const DECIDED_IN_MICROS = /"decidedInMicros":(\d{1,12})/;
/** A request unanswered this long counts as an error (autocannon's default, too). */
const TIMEOUT_S = 10;

interface TimedContext {
  id?: string;
  startedMs?: number;
}

/** Closed loop with autocannon for `durationS`; returns the seconds it ran. */
export async function runClosedLoop(
  target: Target,
  options: { readonly connections: number; readonly durationS: number; readonly tally: Tally },
): Promise<number> {
  const { tally } = options;
  const started = performance.now();
  const result = await autocannon({
    // autocannon takes an array of urls (lib/run.js), which its types do not say.
    url: target.url as string,
    connections: options.connections,
    duration: options.durationS,
    timeout: TIMEOUT_S,
    headers: { ...target.headers },
    requests: [
      {
        method: 'POST',
        path: target.path,
        // Called just before the request is written (the context is fresh for each request).
        setupRequest: (request, context) => {
          const { id, body, headers, path } = target.nextBody();
          const timed = context as TimedContext;
          timed.id = id;
          tally.inFlight.add(id);
          timed.startedMs = performance.now();
          return {
            ...request,
            body,
            ...(headers === undefined ? {} : { headers: { ...request.headers, ...headers } }),
            ...(path === undefined ? {} : { path }),
          };
        },
        onResponse: (status, body, context) => {
          const timed = context as TimedContext;
          if (timed.startedMs !== undefined)
            tally.latencies.record(performance.now() - timed.startedMs);
          if (timed.id !== undefined) tally.inFlight.delete(timed.id);
          tally.answer(status, body);
        },
      },
    ],
  });
  tally.errors += result.errors;
  return (performance.now() - started) / 1000;
}

/**
 * Open loop: `ratePerSecond` requests a second on average for `durationS`, at exponential gaps
 * (a Poisson process; `fixedGaps`: every 1/rate s), on at most `connections`
 * keep-alive connections (KeepAliveSockets, the lightest client measured; a request finding
 * them all busy waits for one, and that wait counts in its latency), then waits for the
 * answers (each bounded by TIMEOUT_S). Returns the seconds until the last answer and how late
 * the client itself sent (its own event loop's delay, to tell a slow client from a slow
 * server).
 */
export async function runOpenLoop(
  target: Target,
  options: {
    readonly connections: number;
    readonly ratePerSecond: number;
    readonly durationS: number;
    readonly tally: Tally;
    readonly fixedGaps?: boolean;
  },
): Promise<{
  readonly elapsedS: number;
  /** Requests scheduled a second over the duration (a Poisson count varies around the rate). */
  readonly offeredPerSecond: number;
  readonly sendLagP99Ms: number;
  /** p99 counted from when each request was actually sent (what a slow client hides). */
  readonly fromSendP99Ms: number;
}> {
  const { tally } = options;
  if (typeof target.url !== 'string') throw new Error('the open loop sends to one url');
  const url = new URL(target.url);
  const sockets = new KeepAliveSockets(url, options.connections, TIMEOUT_S * 1000);
  const meanGapMs = 1000 / options.ratePerSecond;
  const gapMs = () =>
    options.fixedGaps === true ? meanGapMs : -Math.log(1 - Math.random()) * meanGapMs;
  // Room for a Poisson count far above its mean (its deviation is the mean's square root).
  const capacity = Math.ceil(options.ratePerSecond * options.durationS * 1.1) + 1000;
  const sendLag = new LatencySamples(capacity);
  const fromSend = new LatencySamples(capacity);
  let sent = 0;
  let settled = 0;
  const started = performance.now();
  const endMs = started + options.durationS * 1000;
  let nextMs = started + gapMs();
  await new Promise<void>((resolve) => {
    const settle = () => {
      settled += 1;
      if (nextMs >= endMs && settled === sent) resolve();
    };
    const send = (scheduledMs: number) => {
      const { id, body } = target.nextBody();
      tally.inFlight.add(id);
      const sentMs = performance.now();
      sendLag.record(sentMs - scheduledMs);
      sockets.send(postRequest(url, target.path, target.headers, body), (status, answer) => {
        if (status === null) {
          tally.errors += 1;
        } else {
          const answeredMs = performance.now();
          tally.latencies.record(answeredMs - scheduledMs);
          fromSend.record(answeredMs - sentMs);
          tally.inFlight.delete(id);
          tally.answer(status, answer);
        }
        settle();
      });
    };
    const tick = () => {
      const now = performance.now();
      // Every request whose time has come (several when the timer fired late).
      while (nextMs < endMs && nextMs <= now) {
        sent += 1;
        send(nextMs);
        nextMs += gapMs();
      }
      if (nextMs < endMs) setTimeout(tick, Math.max(0, nextMs - now));
      else if (settled === sent) resolve();
    };
    tick();
  });
  sockets.close();
  return {
    elapsedS: (performance.now() - started) / 1000,
    offeredPerSecond: sent / options.durationS,
    sendLagP99Ms: sendLag.summary().p99Ms,
    fromSendP99Ms: fromSend.summary().p99Ms,
  };
}
