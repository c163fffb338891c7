import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Stripe from 'stripe';
import { UsageError } from './keys.js';

/*
 * `spendgate processors replay stripe FILE --to URL [--card ID]`: sends a recorded sequence
 * of a processor's messages to a server, each signed as the processor signs it, so a program
 * can try a hotel stay, a restaurant with a tip, a refund or an outage's advice against its
 * sandbox (docs/processors/*.json; docs/processors.md). The signing secret comes from the
 * environment (SPENDGATE_REPLAY_SECRET), never the command line, where `ps` would show it.
 * In a file, `{{run}}` becomes an id of this run (so a replay is new, not a repeat) and
 * `{{card}}` the processor card given with --card (default ic_replay).
 */

export const REPLAY_USAGE =
  'usage: spendgate processors replay stripe|lithic|marqeta FILE --to URL [--card ID]   (secret: SPENDGATE_REPLAY_SECRET; marqeta: username:password)';

const REPLAY_PROCESSORS = ['stripe', 'lithic', 'marqeta'] as const;
type ReplayProcessor = (typeof REPLAY_PROCESSORS)[number];

/** A sequence file: its messages, each a note and the processor's message. */
interface Sequence {
  readonly processor: string;
  readonly messages: readonly { readonly note?: string; readonly event: Record<string, unknown> }[];
}

/** Messages in one file at most: a sequence is a card's life, not a load test. */
const MESSAGES_MAX = 100;
/** How long one message may take to be answered (Stripe itself waits 2 s for a request). */
const ANSWER_TIMEOUT_MS = 10_000;

export interface ReplayArgs {
  readonly processor: ReplayProcessor;
  readonly file: string;
  readonly to: string;
  readonly card: string;
}

export function parseReplayArgs(argv: readonly string[]): ReplayArgs {
  const [verb, processor, file, ...flags] = argv;
  if (verb !== 'replay' || file === undefined) throw new UsageError(REPLAY_USAGE);
  if (!(REPLAY_PROCESSORS as readonly (string | undefined)[]).includes(processor))
    throw new UsageError(REPLAY_USAGE);
  let to: string | undefined;
  let card = 'ic_replay';
  for (let index = 0; index < flags.length; index += 2) {
    const [flag, value] = [flags[index], flags[index + 1]];
    if (value === undefined) throw new UsageError(REPLAY_USAGE);
    if (flag === '--to') to = value;
    else if (flag === '--card') card = value;
    else throw new UsageError(REPLAY_USAGE);
  }
  if (to === undefined || !/^https?:\/\//.test(to)) throw new UsageError(REPLAY_USAGE);
  return { processor: processor as ReplayProcessor, file, to, card };
}

/** The file's messages, with this run's ids and the card put in. */
export function readSequence(file: string, card: string, run: string): Sequence {
  const text = readFileSync(file, 'utf8').replaceAll('{{run}}', run).replaceAll('{{card}}', card);
  const sequence = JSON.parse(text) as Sequence;
  if (!Array.isArray(sequence.messages) || sequence.messages.length > MESSAGES_MAX)
    throw new UsageError(
      `${file}: a sequence is {processor, messages: [...]} of at most ${MESSAGES_MAX}`,
    );
  return sequence;
}

/**
 * Sends each message in order, signed with `secret` as Stripe signs (its own package's
 * generateTestHeaderString, at the time of sending), and says what each was answered. Stops
 * at the first answer that is not 2xx: what follows would act on a state the sequence did
 * not mean. Out: the lines to print, and whether every message was taken.
 */
export async function replay(
  args: ReplayArgs,
  secret: string,
  run: string = randomBytes(4).toString('hex'),
): Promise<{ readonly lines: string[]; readonly ok: boolean }> {
  const sequence = readSequence(args.file, args.card, run);
  const lines = [
    `replaying ${sequence.messages.length} ${args.processor} messages to ${args.to} (run ${run})`,
  ];
  for (const [index, message] of sequence.messages.entries()) {
    const event =
      args.processor === 'stripe'
        ? { ...message.event, created: Math.floor(Date.now() / 1000) }
        : message.event;
    const payload = JSON.stringify(event);
    const response = await fetch(args.to, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...signedHeaders(args.processor, secret, payload, `msg_${run}_${index}`),
      },
      body: payload,
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    const answer = (await response.text()).slice(0, 500);
    lines.push(
      `${index + 1}. ${messageName(message.event)}${message.note === undefined ? '' : ` (${message.note})`}: ${response.status} ${answer}`,
    );
    if (!response.ok) return { lines, ok: false };
  }
  return { lines, ok: true };
}

/** A message's name for the printed line: Stripe's and Marqeta's type, Lithic's status or event. */
function messageName(event: Record<string, unknown>): string {
  const name = event['type'] ?? event['status'] ?? event['event_type'];
  return typeof name === 'string' ? name : 'message';
}

/**
 * How each processor authenticates a message: Stripe's signature (its own package), Lithic's
 * Standard Webhooks signature (HMAC-SHA256 of "id.timestamp.body" with the whsec_ key),
 * Marqeta's basic auth (the secret is "username:password").
 */
function signedHeaders(
  processor: ReplayProcessor,
  secret: string,
  payload: string,
  id: string,
): Record<string, string> {
  if (processor === 'stripe')
    return { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) };
  if (processor === 'marqeta')
    return { authorization: `Basic ${Buffer.from(secret, 'utf8').toString('base64')}` };
  const timestamp = Math.floor(Date.now() / 1000);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${mac}`,
  };
}

/** The command: its lines printed, exit code 0 when every message was taken, else 1. */
export async function runProcessorsReplay(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ readonly lines: string[]; readonly exitCode: number }> {
  const args = parseReplayArgs(argv);
  const secret = env['SPENDGATE_REPLAY_SECRET'];
  if (secret === undefined || secret === '')
    throw new UsageError(`${REPLAY_USAGE}\nSPENDGATE_REPLAY_SECRET is not set`);
  const result = await replay(args, secret);
  return { lines: result.lines, exitCode: result.ok ? 0 : 1 };
}
