import { z } from 'zod';
import { text, timestampOutput } from './common.js';

/*
 * Processor connections (contract v1.2, section 17): the processor's name, the mode, and the
 * secrets its messages are verified with, each processor's own. Secrets are answered once,
 * at creation and at rotation, and never again.
 */

const mode = z
  .enum(['test', 'live'])
  .meta({ description: "The API key's mode: the connection acts in it." });

/** A secret's text: printable ASCII, as every processor's secrets are. */
const secret = (description: string) =>
  text(8, 512)
    .refine((value) => /^[\x21-\x7e]+$/.test(value), { error: 'must be printable ASCII' })
    .meta({ description });

/**
 * Every processor's secrets, each optional here: which a processor needs is checked by the
 * route (routes/processors.ts), so that one flat body documents them all.
 */
const secrets = {
  signingSecret: secret(
    "Stripe: the webhook endpoint's signing secret (whsec_...), from Stripe's dashboard or API.",
  ).optional(),
  realtimeSigningSecret: secret(
    "Stripe: the real-time authorizations endpoint's signing secret (whsec_...), when Issuing's settings show one of its own.",
  ).optional(),
  asaSecret: secret("Lithic: the ASA HMAC secret (Lithic's /v1/auth_stream/secret).").optional(),
  apiKey: secret("Lithic: an API key, where Lithic's documentation needs one.").optional(),
  username: secret('Marqeta: the basic-auth user name its JIT gateway calls with.').optional(),
  password: secret('Marqeta: the basic-auth password its JIT gateway calls with.').optional(),
};

export const createProcessorBody = z.strictObject({
  processor: z.enum(['stripe', 'lithic', 'marqeta']),
  mode,
  ...secrets,
});

/** Rotation's grace: how long the current secrets still verify, 1 day by default, 7 at most. */
const graceSeconds = z
  .number()
  .int()
  .min(0)
  .max(7 * 24 * 3600)
  .optional()
  .meta({
    description:
      'How long the current secrets still verify, in seconds (default 86400; at most 7 days).',
  });

export const rotateProcessorBody = z.strictObject({ ...secrets, graceSeconds });

export const processorConnectionObject = z
  .object({
    id: z.string(),
    object: z.literal('processor_connection'),
    processor: z.enum(['stripe', 'lithic', 'marqeta']),
    mode: z.enum(['test', 'live']),
    url: z
      .string()
      .meta({ description: 'Where the processor sends its messages (a path of this server).' }),
    createdAt: timestampOutput,
    rotatedAt: timestampOutput.nullable(),
    previousSecretsUntil: timestampOutput.nullable().meta({
      description: 'While a rotation grace lasts, the previous secrets verify too, until then.',
    }),
  })
  .meta({ id: 'ProcessorConnection' });

export const processorConnectionWithSecretsObject = processorConnectionObject
  .extend({
    secrets: z.record(z.string(), z.string()).optional().meta({
      description: 'The secrets, shown this once: absent from an idempotent replay.',
    }),
  })
  .meta({ id: 'ProcessorConnectionWithSecrets' });

export const deletedProcessorObject = z.object({
  object: z.literal('processor_connection'),
  id: z.string(),
  deleted: z.literal(true),
});
