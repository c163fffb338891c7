import { describe, expect, it } from 'vitest';
import { LatencySamples, percentileMs, Tally } from '../bench/http-load.js';
import { readServiceMetrics, shareOver } from '../bench/server-latency.js';

/** The HTTP bench's judgements rest on these: a wrong percentile would misjudge a target. */
describe('the HTTP bench load helpers', () => {
  it('takes nearest-rank percentiles of ascending samples', () => {
    const hundred = Float64Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentileMs(hundred, 0.5)).toBe(50);
    expect(percentileMs(hundred, 0.99)).toBe(99);
    expect(percentileMs(hundred, 1)).toBe(100);
    expect(percentileMs(Float64Array.from([7]), 0.99)).toBe(7);
    expect(percentileMs(new Float64Array(0), 0.5)).toBeNaN();
  });

  it('keeps fractions of a millisecond, sorts numerically, and bounds its memory', () => {
    const samples = new LatencySamples(4);
    for (const ms of [10, 2.4, 9, 2.6, 100]) samples.record(ms);
    expect(samples.count).toBe(4);
    expect(samples.dropped).toBe(1);
    expect(samples.summary()).toEqual({ p50Ms: 2.6, p99Ms: 10, p999Ms: 10, maxMs: 10 });
  });

  it('counts the share of samples over a bound', () => {
    const samples = new LatencySamples(10);
    expect(samples.shareOver(5)).toBeNaN();
    for (const ms of [1, 5, 5.01, 12]) samples.record(ms);
    expect(samples.shareOver(5)).toBe(0.5);
    expect(samples.shareOver(10)).toBe(0.25);
  });

  it("reads the service's request histogram for the authorize route, every status summed", () => {
    const metrics = (fiveMs: number, tenMs: number, count: number) =>
      [
        '# HELP spendgate_http_request_duration_seconds HTTP request latency by method, route and status.',
        '# TYPE spendgate_http_request_duration_seconds histogram',
        `spendgate_http_request_duration_seconds_bucket{le="0.005",method="POST",route="/v1/authorizations",status="200"} ${fiveMs}`,
        `spendgate_http_request_duration_seconds_bucket{le="0.01",method="POST",route="/v1/authorizations",status="200"} ${tenMs}`,
        `spendgate_http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/authorizations",status="200"} ${count}`,
        `spendgate_http_request_duration_seconds_count{method="POST",route="/v1/authorizations",status="200"} ${count}`,
        'spendgate_http_request_duration_seconds_bucket{le="0.005",method="POST",route="/v1/authorizations",status="429"} 1',
        'spendgate_http_request_duration_seconds_bucket{le="0.01",method="POST",route="/v1/authorizations",status="429"} 1',
        'spendgate_http_request_duration_seconds_count{method="POST",route="/v1/authorizations",status="429"} 1',
        'spendgate_http_request_duration_seconds_bucket{le="0.005",method="POST",route="/v1/bench/noop",status="200"} 500',
        'spendgate_http_request_duration_seconds_count{method="POST",route="/v1/bench/noop",status="200"} 900',
      ].join('\n');
    const before = readServiceMetrics(metrics(90, 99, 100)).histogram;
    expect(before.count).toBe(101);
    expect(before.atOrUnderByMs.get(5)).toBe(91);
    // 1,000 more answers: 950 within 5 ms, 990 within 10.
    const after = readServiceMetrics(metrics(1040, 1089, 1100)).histogram;
    expect(shareOver(before, after, 5)).toBeCloseTo(0.05, 10);
    expect(shareOver(before, after, 10)).toBeCloseTo(0.01, 10);
    expect(shareOver(before, before, 5)).toBeNull();
    expect(() => shareOver(before, after, 7)).toThrow(/not a bound/);
  });

  it("reads the event loop monitor's ticks from prom-client's default gauges", () => {
    const text = [
      'nodejs_eventloop_lag_p50_seconds 0.0101',
      'nodejs_eventloop_lag_p99_seconds 0.0125',
      'nodejs_eventloop_lag_max_seconds 0.0421',
    ].join('\n');
    expect(readServiceMetrics(text).ticksMs).toEqual({ p50: 10.1, p99: 12.5, max: 42.1 });
    expect(readServiceMetrics('nodejs_eventloop_lag_p99_seconds 0.01').ticksMs).toBeNull();
  });

  it("reads the full collections from prom-client's GC histogram, the major kind alone", () => {
    const text = [
      '# TYPE nodejs_gc_duration_seconds histogram',
      'nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 90',
      'nodejs_gc_duration_seconds_sum{kind="minor"} 0.25',
      'nodejs_gc_duration_seconds_count{kind="minor"} 100',
      'nodejs_gc_duration_seconds_bucket{le="0.001",kind="major"} 0',
      'nodejs_gc_duration_seconds_sum{kind="major"} 0.0425',
      'nodejs_gc_duration_seconds_count{kind="major"} 7',
    ].join('\n');
    expect(readServiceMetrics(text).fullCollections).toEqual({ count: 7, ms: 42.5 });
    // No full collection yet since the histogram began: none, not unknown.
    const minorOnly = text.replaceAll('major', 'incremental');
    expect(readServiceMetrics(minorOnly).fullCollections).toEqual({ count: 0, ms: 0 });
    expect(readServiceMetrics(text.split('\n').slice(1).join('\n')).fullCollections).toBeNull();
  });

  it('classifies answers by status and body', () => {
    const tally = new Tally(10);
    tally.answer(200, '{"approved":true,"declineCode":null}');
    tally.answer(200, '{"approved":false,"standIn":true}');
    tally.answer(200, '{"approved":false,"declineCode":"card_declined"}');
    tally.answer(200, '{"ok":true}');
    tally.answer(200, '{"something":"else"}');
    tally.answer(429, '{"error":{}}');
    expect(tally).toMatchObject({
      ok: 5,
      non200: 1,
      approved: 1,
      declined: 2,
      standIn: 1,
      noop: 1,
      unexpected: 1,
    });
    expect(tally.samples.length).toBe(4);
  });

  it("keeps each decision's decidedInMicros, in milliseconds, and nothing of other answers", () => {
    const tally = new Tally(10);
    tally.answer(200, '{"approved":true,"decidedInMicros":1500,"standIn":false}');
    tally.answer(200, '{"approved":false,"decidedInMicros":250}');
    tally.answer(200, '{"ok":true}');
    tally.answer(500, '{"decidedInMicros":9999}');
    expect(tally.decidedMs.count).toBe(2);
    expect(tally.decidedMs.summary()).toMatchObject({ p50Ms: 0.25, maxMs: 1.5 });
    expect(tally.decidedMs.shareOver(1)).toBe(0.5);
  });
});
