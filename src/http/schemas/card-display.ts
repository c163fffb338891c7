import { z } from 'zod';
import { DISPLAY_ORIGINS_MAX } from '../../store/store.js';
import { DISPLAY_ORIGIN_LENGTH_MAX } from '../display-origins.js';
import { text, timestampOutput } from './common.js';

/** Create Card Display Token's answer (issue 18): shown once, never stored, never logged. */
export const cardDisplayTokenObject = z
  .object({
    object: z.literal('card_display_token'),
    cardId: z.string(),
    token: z.string().meta({
      description:
        'Single use, for 60 seconds: the authority of GET /card-display. Hand it to the ' +
        "cardholder's browser only (as the iframe's URL), never keep it.",
    }),
    url: z.string().meta({
      description:
        'The page to load in an iframe, relative to the API base: /card-display?token=..., ' +
        'to which the style parameters (font, color, background, accent) may be added.',
    }),
    expiresAt: timestampOutput,
  })
  .meta({ id: 'CardDisplayToken' });

export const displayOriginsObject = z
  .object({
    object: z.literal('card_display_origins'),
    origins: z.array(z.string()),
  })
  .meta({ id: 'CardDisplayOrigins' });

export const setDisplayOriginsBody = z.strictObject({
  origins: z
    .array(text(1, DISPLAY_ORIGIN_LENGTH_MAX))
    .max(DISPLAY_ORIGINS_MAX)
    .meta({
      description:
        `At most ${DISPLAY_ORIGINS_MAX} origins (https://app.example.com: scheme, host and ` +
        'port, no path) that may frame the card display page; in test mode http on ' +
        'localhost, 127.0.0.1 or [::1] too. Replaces the list; an empty list lets no page ' +
        'frame it.',
    }),
});
