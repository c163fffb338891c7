import type { OperationDoc } from '../operation-docs/doc.js';
import { ACCOUNT, EXAMPLE_TOTP_SECRET, IDEMPOTENT } from '../operation-docs/examples.js';

/** The reference page's text and examples of the account operations, by operationId. */
export const ACCOUNT_DOCS = {
  retrieveAccount: {
    summary: 'Retrieve the account',
    description:
      "The account the key belongs to, in the key's mode (`test` or `live`). Any valid key may " +
      'call it: a quick way to check a key.',
    returns: "The key's account.",
    errors: [],
    example: ACCOUNT,
  },
  retrieveApiKey: {
    summary: 'Retrieve the API key',
    description:
      "The calling key's id, mode and scopes, never the key itself. Any valid key may call it: " +
      'a client such as the console (`/console`) reads it to show only what the key may do.',
    returns: 'The calling key.',
    errors: [],
    example: {
      id: 'key_0193a4f1c1a07b3e9f1a2b3c4d5e6f71',
      object: 'api_key',
      mode: 'test',
      scopes: ['cards:read', 'transactions:read', 'vaults:read'],
    },
  },
  retrieveDisplayOrigins: {
    summary: 'Retrieve the display origins',
    description:
      "The origins that may frame the card display page of this account in the key's mode " +
      '(its `Content-Security-Policy: frame-ancestors`). Empty: no page may frame it.',
    returns: 'The registered origins.',
    errors: [],
    example: { object: 'card_display_origins', origins: ['https://app.example.com'] },
  },
  setDisplayOrigins: {
    summary: 'Set the display origins',
    description:
      "Replaces the origins that may frame the card display page, in the key's mode: at most " +
      '20, each an origin alone (`https://app.example.com`: scheme, host and a port other than ' +
      "the scheme's, no path, no wildcard), https only but, in test mode, http on localhost, " +
      '127.0.0.1 or [::1]. Repeats are kept once; an empty list lets no page frame it. Needs ' +
      '`account:write`.',
    returns: 'The origins now registered.',
    errors: [
      ...IDEMPOTENT,
      {
        code: 'parameter_invalid',
        message: 'The origin must be an origin alone: scheme, host and port, no path or wildcard.',
        param: 'origins[0]',
      },
    ],
    example: { object: 'card_display_origins', origins: ['https://app.example.com'] },
    requestExample: { origins: ['https://app.example.com'] },
  },
  retrieveRateLimits: {
    summary: "Retrieve the key's rate limit",
    description:
      "The caller's key's rate-limit window, as the count left it: this request is counted like " +
      'any other, so the body agrees with its own `RateLimit-*` headers. Limits are per key, ' +
      'per second, shared by every server process.',
    returns: 'The rate-limit window of the key.',
    errors: [],
    example: {
      object: 'rate_limit',
      limit: 25,
      remaining: 24,
      resetAt: '2026-03-02T14:05:10.000Z',
      windowSeconds: 1,
    },
  },
  beginTwoFactor: {
    summary: 'Begin two-factor enrolment',
    description:
      'Makes a new TOTP secret (30-second steps) and its `otpauth://` URI, also as an SVG QR ' +
      'code, for an authenticator app. Two-factor is not on until Verify Two-Factor accepts a code of it. Answered with ' +
      '`Cache-Control: no-store`. Refused while two-factor is already on: turn it off first.',
    returns: 'The secret, its otpauth URI and that URI as a QR code, shown this once.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'Two-factor authentication is already on; turn it off first.',
      },
    ],
    example: {
      object: 'two_factor_enrolment',
      secret: EXAMPLE_TOTP_SECRET,
      otpauthUri: `otpauth://totp/spendgate:acme?secret=${EXAMPLE_TOTP_SECRET}&issuer=spendgate`,
      // Cut short: a whole code is some kilobytes of path data.
      qrCodeSvg:
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 45 45" shape-rendering="crispEdges">' +
        '<path fill="#ffffff" d="M0 0h45v45H0z"/><path stroke="#000000" d="M4 4.5h7m2 0h1..."/></svg>',
    },
  },
  verifyTwoFactor: {
    summary: 'Turn two-factor on',
    description:
      'Checks a code of the secret Begin Two-Factor made (before it, every code is wrong) and ' +
      'turns two-factor on: from then on ' +
      'Reveal Card Details and turning two-factor off need `X-Two-Factor-Code`. Each code is ' +
      'accepted once; after 5 wrong codes in 15 minutes every two-factor check of the account ' +
      'answers 429 with `Retry-After`, even for the right code.',
    returns: 'The account, with two-factor on.',
    errors: [
      'invalid_two_factor_code',
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: { ...ACCOUNT, twoFactorEnabled: true },
    requestExample: { code: '492039' },
  },
  disableTwoFactor: {
    summary: 'Turn two-factor off',
    description:
      'Turns two-factor off, with a current code in `X-Two-Factor-Code`. The same lockout as ' +
      'Verify Two-Factor applies to wrong codes.',
    returns: 'The account, with two-factor off.',
    errors: [
      'two_factor_required',
      'invalid_two_factor_code',
      { code: 'parameter_invalid', message: 'Two-factor authentication is not on.' },
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: ACCOUNT,
  },
} satisfies Record<string, OperationDoc>;
