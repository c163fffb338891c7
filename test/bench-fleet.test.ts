import { describe, expect, it } from 'vitest';
import {
  busyCores,
  cpuPerOperationUs,
  cpuShare,
  deliveryRate,
  scalingVerdict,
  type FleetRun,
} from '../bench/fleet-figures.js';

/** bench:fleet's figures and its verdict on what limits scaling rest on these. */
describe('the fleet bench figures', () => {
  it('counts deliveries from the moment every worker was ready', () => {
    // Two before the start (one worker alone), four after it over 2 s.
    const rate = deliveryRate([900, 950, 1000, 1500, 2500, 3000], 1000);
    expect(rate).toEqual({ counted: 4, spanS: 2, perSecond: 2 });
    expect(deliveryRate([], 1000).perSecond).toBeNaN();
    expect(deliveryRate([500], 1000).counted).toBe(0);
  });

  it('gives CPU per operation in microseconds, NaN without operations', () => {
    expect(cpuPerOperationUs(0.5, 1000)).toBe(500);
    expect(cpuPerOperationUs(1, 0)).toBeNaN();
  });

  const run = (name: string, perSecond: number, cpu: [string, number][], other = 0): FleetRun => ({
    name,
    perSecond,
    measuredS: 10,
    cpu: cpu.map(([process, cpuS]) => ({ name: process, cpuS })),
    otherCores: other,
  });

  it('adds the cores a run kept busy, and the shares of its processes', () => {
    const two = run('2 API', 1000, [
      ['API 1', 6],
      ['API 2', 6],
      ['PostgreSQL', 8],
    ]);
    expect(busyCores(two)).toBe(2);
    expect(cpuShare(two, 'API')).toBeCloseTo(0.6);
    expect(busyCores({ ...two, otherCores: 0.5 })).toBe(2.5);
  });

  it('says the CPU limits a fleet whose cores are full and that did not speed up', () => {
    const one = run('1 API', 1000, [
      ['API 1', 10],
      ['PostgreSQL', 8],
    ]);
    const two = run('2 API', 1050, [
      ['API 1', 6],
      ['API 2', 6],
      ['PostgreSQL', 8],
    ]);
    const verdict = scalingVerdict('authorizations', one, two, 2);
    expect(verdict).toContain('1.05x');
    expect(verdict).toContain('2.00 of 2 cores busy');
    expect(verdict).toContain('PostgreSQL 40%');
    expect(verdict).toContain('the CPU limits it here');
  });

  it('tells a fleet that scaled from one that waited on something else', () => {
    const one = run('1 worker', 500, [['worker 1', 4]]);
    const scaled = run('2 workers', 900, [
      ['worker 1', 4],
      ['worker 2', 4],
    ]);
    expect(scalingVerdict('webhooks', one, scaled, 2)).toContain(': it scaled; worker 1');
    const waited = run('2 workers', 520, [
      ['worker 1', 2],
      ['worker 2', 2],
    ]);
    expect(scalingVerdict('webhooks', one, waited, 2)).toContain('not CPU-bound, yet no speed-up');
    expect(scalingVerdict('webhooks', one, run('none', 0, []), 2)).toContain('no verdict');
  });
});
