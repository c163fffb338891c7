import type { FastifyInstance } from 'fastify';
import { parse } from 'lossless-json';
import {
  ImpreciseNumber,
  JSON_NUMBER_DIGITS_MAX,
  significantDigits,
  SpendgateError,
} from '../core/index.js';

/*
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

/**
 * How deep a body may nest. The deepest document the API takes is a policy at its condition
 * depth bound (10), a few dozen levels of JSON; every later step that walks a body (the parser,
 * validation, the idempotency record's hash) is recursive, and a body of a thousand levels
 * would exhaust the stack in one of them.
 */
export const JSON_DEPTH_MAX = 64;

/** Whether `text` nests objects and arrays deeper than JSON_DEPTH_MAX (strings skipped). */
function nestsTooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index += 1; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      depth += 1;
      if (depth > JSON_DEPTH_MAX) return true;
    } else if (code === 0x7d || code === 0x5d) depth -= 1;
  }
  return false;
}
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
    if (nestsTooDeep(text)) {
      done(
        new SpendgateError(
          'invalid_json',
          `The request body nests deeper than ${String(JSON_DEPTH_MAX)} levels.`,
        ),
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
