import type { FastifyInstance } from 'fastify';
import { parse } from 'lossless-json';
import {
  ImpreciseNumber,
  JSON_NUMBER_DIGITS_MAX,
  significantDigits,
  SpendgateError,
} from '../core/index.js';

/**
 * The JSON body parser. JSON.parse turns the literal 0.10000000000000001 into 0.1 before any
 * amount check could see it, which would accept an amount the client did not send. This
 * parser reads every number literal as written: up to 15 significant digits it is a number (a
 * double holds those exactly), beyond that an ImpreciseNumber, which amount parsing refuses
 * and any other numeric field fails to validate. Keys that would reach an object's prototype
 * are refused, as Fastify's own parser does.
 */
function parseNumber(literal: string): number | ImpreciseNumber {
  return significantDigits(literal) > JSON_NUMBER_DIGITS_MAX
    ? new ImpreciseNumber(literal)
    : Number(literal);
}

const PROTOTYPE_KEYS = /"(?:__proto__|constructor|prototype)"\s*:/;
// PostgreSQL text cannot hold NUL; a body carrying one anywhere is refused whole, up front.
const NUL_ESCAPE = /\\u0000/i;

/**
 * JSON is the one media type the API reads (contract section 1): Fastify's own parsers go, the
 * text/plain one included, so that any other content-type on a body is 415
 * `unsupported_media_type` rather than a string that fails validation as 400.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (NUL_ESCAPE.test(text)) {
      done(
        new SpendgateError('invalid_json', 'The request body contains a NUL character.'),
        undefined,
      );
      return;
    }
    if (PROTOTYPE_KEYS.test(text)) {
      done(new SpendgateError('invalid_json', 'The request body uses a reserved key.'), undefined);
      return;
    }
    try {
      done(null, parse(text, null, parseNumber));
    } catch {
      done(new SpendgateError('invalid_json', 'The request body is not valid JSON.'), undefined);
    }
  });
}
