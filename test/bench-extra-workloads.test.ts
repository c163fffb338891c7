import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ExpectTally } from '../bench/extra-harness.js';
import { isExtraSelection } from '../bench/extra-workloads.js';
import { runClosedLoop, type Target } from '../bench/http-load.js';

/**
 * The judgements of bench:http's lifecycle, processor and SOL workloads (issues 34-36) rest
 * on these: which `--only` runs them, how an answer is judged, and that a signed body goes
 * with its own headers to its own path.
 */
describe('the extra HTTP bench workloads', () => {
  it('takes its own names and groups from --only, and refuses a mix with the others', () => {
    expect(isExtraSelection(undefined)).toBe(false);
    expect(isExtraSelection('spread,hot')).toBe(false);
    expect(isExtraSelection('messages')).toBe(true);
    expect(isExtraSelection('capture, refund')).toBe(true);
    expect(isExtraSelection('processors,sol')).toBe(true);
    expect(() => isExtraSelection('spread,stripe')).toThrow(/mixes/);
  });

  it('judges each answer by the status and shape its message expects', () => {
    const tally = new ExpectTally((status, body) =>
      status === 201 && body.includes('"type":"refund"') ? 'posted' : null,
    );
    tally.answer(201, '{"type":"refund"}');
    tally.answer(200, '{"type":"refund"}');
    tally.answer(201, '{"type":"force_capture"}');
    tally.answer(409, '{"error":{}}');
    expect([tally.posted, tally.ok, tally.unexpected, tally.non200, tally.wrong]).toEqual([
      1, 1, 2, 1, 3,
    ]);
    const decisions = new ExpectTally((status, body) =>
      status === 200 && body.includes('"approved":true') ? 'approved' : null,
    );
    decisions.answer(200, '{"approved":false}');
    expect([decisions.approved, decisions.unexpected, decisions.wrong]).toEqual([0, 1, 1]);
    expect(decisions.samples[0]).toContain('"approved":false');
  });

  it('sends each body with its own headers and path in the closed loop', async () => {
    const seen: { path: string; header: string | undefined; body: string }[] = [];
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const header = request.headers['x-signature'];
        seen.push({
          path: request.url ?? '',
          header: typeof header === 'string' ? header : undefined,
          body: Buffer.concat(chunks).toString(),
        });
        response.end('{"approved":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    let n = 0;
    const target: Target = {
      url: `http://127.0.0.1:${port}`,
      path: '/default',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      nextBody: () => {
        n += 1;
        const body = JSON.stringify({ n });
        return n % 2 === 0
          ? { id: String(n), body, headers: { 'x-signature': `sig-${n}` }, path: `/holds/${n}` }
          : { id: String(n), body };
      },
    };
    try {
      const tally = new ExpectTally(() => 'approved');
      await runClosedLoop(target, { connections: 2, durationS: 1, tally });
    } finally {
      server.close();
    }
    expect(seen.length).toBeGreaterThan(4);
    for (const request of seen) {
      const sent = (JSON.parse(request.body) as { n: number }).n;
      if (sent % 2 === 0) {
        expect([request.path, request.header]).toEqual([`/holds/${sent}`, `sig-${sent}`]);
      } else {
        expect([request.path, request.header]).toEqual(['/default', undefined]);
      }
    }
  });
});
