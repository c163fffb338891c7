import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import QRCode from 'qrcode';
import { z } from 'zod';
import { presentAccount, presentTwoFactorEnrolment, SpendgateError } from '../../core/index.js';
import {
  TWO_FACTOR_FAILURE_WINDOW_MS,
  TWO_FACTOR_FAILURES_MAX,
  type TwoFactorRefusal,
  type Store,
} from '../../store/store.js';
import { authOf } from '../auth.js';
import { accountObject, callerAccount } from './account.js';
import { text, twoFactorHeaders } from '../schemas/common.js';
import type { OperationId } from '../operation-docs/index.js';

const enrolmentObject = z.object({
  object: z.literal('two_factor_enrolment'),
  secret: z.string(),
  otpauthUri: z.string(),
  qrCodeSvg: z.string().meta({
    description:
      'otpauthUri as a QR code, an SVG document to show for an authenticator app to scan. It ' +
      'carries the secret: keep it as secret as the secret itself.',
  }),
});

/**
 * The enrolment URI as an SVG QR code. Error correction M (15% of the code may be unreadable)
 * and the standard quiet zone of 4 modules: what a phone camera reads off a screen reliably.
 */
function qrCodeSvg(otpauthUri: string): Promise<string> {
  return QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
}

/**
 * The error to throw for a refused two-factor check, once the transaction that counted it has
 * committed; shared with Reveal Card Details. A lockout carries Retry-After, and the wrong
 * code that starts one is logged (the account, never the code or the secret), so that an
 * operator sees guessing.
 */
export function twoFactorRefused(
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: TwoFactorRefusal,
): SpendgateError {
  if (refusal.code === 'rate_limit_exceeded') {
    void reply.header('Retry-After', String(refusal.retryAfterS ?? 1));
    return new SpendgateError(
      'rate_limit_exceeded',
      `Too many wrong two-factor codes: try again in ${refusal.retryAfterS ?? 1} seconds.`,
    );
  }
  if (refusal.lockoutStarted) {
    request.log.warn(
      {
        accountId: authOf(request).scope.accountId,
        failures: TWO_FACTOR_FAILURES_MAX,
        windowMinutes: TWO_FACTOR_FAILURE_WINDOW_MS / 60_000,
      },
      'two-factor checks locked after too many wrong codes',
    );
  }
  return new SpendgateError(
    'invalid_two_factor_code',
    'The two-factor code is wrong or was already used.',
  );
}

/**
 * Two-factor enrolment (contract section 2): begin, verify to turn on, turn off with a code.
 * v1.1: each needs `account:write`, so that a narrow key (the card network's) can neither
 * enrol a secret only it holds, locking the owner out of Reveal, nor switch two-factor off.
 */
export function registerTwoFactorRoutes(app: FastifyInstance, store: Store): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post('/v1/account/two-factor', beginTwoFactorRoute, async (request, reply) => {
    void reply.header('Cache-Control', 'no-store');
    const enrolment = await store.beginTwoFactor(authOf(request).scope.accountId);
    return presentTwoFactorEnrolment(enrolment, await qrCodeSvg(enrolment.otpauthUri));
  });

  routes.post('/v1/account/two-factor/verify', verifyTwoFactorRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const refusal = await store.verifyTwoFactor(scope.accountId, request.body.code);
    if (refusal !== null) throw twoFactorRefused(request, reply, refusal);
    return presentAccount(await callerAccount(store, scope), scope.mode);
  });

  routes.delete('/v1/account/two-factor', disableTwoFactorRoute, async (request, reply) => {
    const { scope } = authOf(request);
    const refusal = await store.disableTwoFactor(
      scope.accountId,
      request.headers['x-two-factor-code'],
    );
    if (refusal !== null) throw twoFactorRefused(request, reply, refusal);
    return presentAccount(await callerAccount(store, scope), scope.mode);
  });
}

const beginTwoFactorRoute = {
  config: { requiredScope: 'account:write' },
  schema: {
    operationId: 'beginTwoFactor' satisfies OperationId,
    tags: ['account'],
    response: { 200: enrolmentObject },
  },
} as const;

const verifyTwoFactorRoute = {
  config: { requiredScope: 'account:write' },
  schema: {
    operationId: 'verifyTwoFactor' satisfies OperationId,
    tags: ['account'],
    body: z.strictObject({ code: text(1, 10) }),
    response: { 200: accountObject },
  },
} as const;

const disableTwoFactorRoute = {
  config: { requiredScope: 'account:write' },
  schema: {
    operationId: 'disableTwoFactor' satisfies OperationId,
    tags: ['account'],
    headers: twoFactorHeaders,
    response: { 200: accountObject },
  },
} as const;
