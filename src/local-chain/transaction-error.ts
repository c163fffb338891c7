/**
 * bankrun reports a transaction error as its Rust Display text ("Error processing Instruction
 * 0: custom program error: 0x1"); JSON-RPC nodes report the serde JSON form
 * ({ InstructionError: [0, { Custom: 1 }] }). The worker sees the node's form, so the common
 * errors are translated; an unknown text is passed on as is (web3.js accepts a string too).
 */

export type TransactionErrorJson = string | Record<string, unknown>;

const TRANSACTION_ERRORS: Readonly<Record<string, string>> = {
  'Account in use': 'AccountInUse',
  'Account loaded twice': 'AccountLoadedTwice',
  'Attempt to debit an account but found no record of a prior credit.': 'AccountNotFound',
  'Attempt to load a program that does not exist': 'ProgramAccountNotFound',
  'Insufficient funds for fee': 'InsufficientFundsForFee',
  'This account may not be used to pay transaction fees': 'InvalidAccountForFee',
  'This transaction has already been processed': 'AlreadyProcessed',
  'Blockhash not found': 'BlockhashNotFound',
  'Transaction did not pass signature verification': 'SignatureFailure',
  'Transaction contains an invalid account reference': 'InvalidAccountIndex',
  'Transaction failed to sanitize accounts offsets correctly': 'SanitizeFailure',
};

const INSTRUCTION_ERRORS: Readonly<Record<string, string>> = {
  'generic instruction error': 'GenericError',
  'invalid program argument': 'InvalidArgument',
  'invalid instruction data': 'InvalidInstructionData',
  'invalid account data for instruction': 'InvalidAccountData',
  'account data too small for instruction': 'AccountDataTooSmall',
  'insufficient funds for instruction': 'InsufficientFunds',
  'incorrect program id for instruction': 'IncorrectProgramId',
  'missing required signature for instruction': 'MissingRequiredSignature',
  'instruction requires an uninitialized account': 'AccountAlreadyInitialized',
  'instruction requires an initialized account': 'UninitializedAccount',
  'instruction changed the balance of a read-only account': 'ReadonlyLamportChange',
  'instruction spent from the balance of an account it does not own': 'ExternalAccountLamportSpend',
  'instruction modified data of an account it does not own': 'ExternalAccountDataModified',
  'An account required by the instruction is missing': 'NotEnoughAccountKeys',
  'Provided owner is not allowed': 'IllegalOwner',
  'Computational budget exceeded': 'ComputationalBudgetExceeded',
  'Provided seeds do not result in a valid address': 'InvalidSeeds',
};

const INSTRUCTION = /^Error processing Instruction (\d+): (.*)$/s;
const CUSTOM = /^custom program error: 0x([0-9a-f]+)$/i;
const RENT = /^Transaction results in an account \((\d+)\) with insufficient funds for rent$/;

function instructionError(text: string): TransactionErrorJson {
  const custom = CUSTOM.exec(text);
  if (custom?.[1] !== undefined) return { Custom: Number.parseInt(custom[1], 16) };
  return INSTRUCTION_ERRORS[text] ?? text;
}

export function toTransactionError(text: string): TransactionErrorJson {
  const known = TRANSACTION_ERRORS[text];
  if (known !== undefined) return known;
  const instruction = INSTRUCTION.exec(text);
  if (instruction?.[1] !== undefined && instruction[2] !== undefined) {
    return { InstructionError: [Number(instruction[1]), instructionError(instruction[2])] };
  }
  const rent = RENT.exec(text);
  if (rent?.[1] !== undefined) {
    return { InsufficientFundsForRent: { account_index: Number(rent[1]) } };
  }
  return text;
}
