import type { OperationDoc } from './doc.js';
import { ACCOUNT_DOCS } from '../routes/account.docs.js';
import { VAULTS_DOCS } from '../routes/vaults.docs.js';
import { POLICIES_DOCS } from '../routes/policies.docs.js';
import { CARDS_DOCS } from '../routes/cards.docs.js';
import { AUTHORIZATIONS_DOCS } from '../routes/authorizations.docs.js';
import { TRANSFERS_DOCS } from '../routes/transfers.docs.js';
import { WEBHOOKS_DOCS } from '../routes/webhooks.docs.js';
import { PROCESSORS_DOCS } from '../routes/processors.docs.js';

export type { ErrorExample, OperationDoc } from './doc.js';
export { ERROR_EXAMPLES } from './error-examples.js';
export { EXAMPLE_REQUEST_ID } from './examples.js';

/**
 * What the reference page (/docs) says of each operation, keyed by operationId: its summary and
 * description, what its success answers, the error codes it can answer, and realistic examples.
 * One table beside the routes rather than in them, so that the prose of the whole API reads
 * and is reviewed in one place; `src/http/openapi.ts` applies it to the generated document, and
 * `test/http/openapi.test.ts` fails while an operation has no entry here, or an entry names no
 * operation, or an example does not fit its schema.
 *
 * `errors` names the codes particular to the operation. The codes every route with a key can
 * answer (no key, a bad or expired key, a missing scope, the rate limit) and those of every
 * JSON body (malformed JSON, too large, not JSON, a field missing or invalid) are added to
 * each operation from the document itself, as is the `default` response for the rest
 * (`internal_error`, `service_unavailable`).
 *
 * Every example value is made up: ids, card numbers, secrets and addresses are obviously fake.
 *
 * Each resource keeps its operations' docs beside its routes (`routes/<resource>.docs.ts`);
 * a route names its operation as an `OperationId`, so a route whose operation has no docs fails
 * to compile (and docs of no route fail test/http/openapi.test.ts).
 */
const DOCS = {
  ...ACCOUNT_DOCS,
  ...VAULTS_DOCS,
  ...POLICIES_DOCS,
  ...CARDS_DOCS,
  ...AUTHORIZATIONS_DOCS,
  ...TRANSFERS_DOCS,
  ...WEBHOOKS_DOCS,
  ...PROCESSORS_DOCS,
} satisfies Readonly<Record<string, OperationDoc>>;

/** The operations of the REST interface, by the operationId each route declares. */
export type OperationId = keyof typeof DOCS;

/** Read by an operationId of the document, a plain string (an embedder's route has none). */
export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = DOCS;
