import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { assert, Decimal, type Scope } from '../core/index.js';
import type { AuthorizeInput } from '../store/store.js';

/*
 * The stand-in answers a process owes the ledger, on its own disk (issue 37, item 3: the
 * network is told what is recorded, whatever crashes). A stand-in answer is given when the
 * database does not answer in time, so it cannot be written there first; it is written here,
 * and flushed to the disk (fdatasync), before the network is answered. Once the ledger records
 * it, a `done` line follows (not flushed: a lost one only records an advice twice, which the
 * store answers as recorded).
 *
 * One file per process, `<pid>-<random>.jsonl`, in a folder of its own. A process that starts
 * takes over the files of processes no longer running on this machine (rename is atomic, so
 * two that start together do not both take one) and records what they still owed. What this
 * does not cover: a machine lost with its disk, and a file whose pid a live process reuses
 * (taken over once that process ends).
 */

/** What one line says. */
type Line =
  | {
      readonly t: 'owe';
      readonly key: string;
      readonly scope: Scope;
      readonly input: StoredInput;
      readonly approved: boolean;
    }
  | { readonly t: 'done'; readonly key: string };

/** AuthorizeInput with its amounts as exact decimal strings. */
interface StoredInput extends Omit<AuthorizeInput, 'amount' | 'merchantAmount'> {
  readonly amount: string;
  readonly merchantAmount?: { readonly amount: string; readonly currency: string } | null;
}

export interface JournalOwed {
  readonly key: string;
  readonly scope: Scope;
  readonly input: AuthorizeInput;
  readonly approved: boolean;
}

/** Lines one file may hold before it is started again empty (when nothing in it is owed). */
const LINES_BEFORE_RESTART = 100_000;
/** Lines read from a file taken over, at most: more than any process could have owed. */
const ADOPTED_LINES_MAX = 1_000_000;

export class StandInJournal {
  #handle: FileHandle | null = null;
  #lines = 0;
  /** Owed keys of this process's file, to know when it may start again empty. */
  readonly #owedKeys = new Set<string>();
  #writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly file: string,
  ) {}

  /** Opens this process's file in `dir` (made, owner-only, when missing). */
  static async open(dir: string): Promise<StandInJournal> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = `${String(process.pid)}-${randomBytes(6).toString('hex')}.jsonl`;
    const journal = new StandInJournal(dir, file);
    journal.#handle = await open(join(dir, file), 'a', 0o600);
    return journal;
  }

  /** Writes what the network is about to be told and flushes it to the disk. */
  async owe(owed: JournalOwed): Promise<void> {
    this.#owedKeys.add(owed.key);
    const line: Line = {
      t: 'owe',
      key: owed.key,
      scope: owed.scope,
      input: storedInput(owed.input),
      approved: owed.approved,
    };
    await this.#append(line, true);
  }

  /** Notes that the ledger recorded `key`. */
  async recorded(key: string): Promise<void> {
    if (!this.#owedKeys.delete(key)) return;
    await this.#append({ t: 'done', key }, false);
    if (this.#owedKeys.size === 0 && this.#lines >= LINES_BEFORE_RESTART) await this.#restart();
  }

  /**
   * Takes over the files of processes no longer running and returns what they still owed, each
   * written again into this process's file first, so a crash now loses none of it.
   */
  async adoptOrphans(): Promise<JournalOwed[]> {
    const adopted: JournalOwed[] = [];
    for (const name of await readdir(this.dir)) {
      if (name === this.file || !name.endsWith('.jsonl') || processRuns(name)) continue;
      const taken = join(this.dir, `${String(process.pid)}-taken-${name}`);
      try {
        await rename(join(this.dir, name), taken);
      } catch {
        continue; // Another process took it first.
      }
      const owed = owedIn(await readFile(taken, 'utf8'));
      for (const entry of owed) await this.owe(entry);
      await unlink(taken);
      adopted.push(...owed);
    }
    return adopted;
  }

  /** Closes the file; removes it when nothing in it is owed. */
  async close(): Promise<void> {
    await this.#writing;
    await this.#handle?.close();
    this.#handle = null;
    if (this.#owedKeys.size === 0) await unlink(join(this.dir, this.file)).catch(() => undefined);
  }

  /** Appends one line, in order with the others; `flush`: on the disk before it resolves. */
  #append(line: Line, flush: boolean): Promise<void> {
    const write = async () => {
      const handle = this.#handle;
      assert(handle !== null, 'the journal is open');
      await handle.appendFile(`${JSON.stringify(line)}\n`);
      this.#lines += 1;
      if (flush) await handle.datasync();
    };
    this.#writing = this.#writing.then(write, write);
    return this.#writing;
  }

  async #restart(): Promise<void> {
    await this.#writing;
    await this.#handle?.truncate(0);
    this.#lines = 0;
  }
}

/** Whether the process that wrote `name` (`<pid>-...`) still runs on this machine. */
function processRuns(name: string): boolean {
  const pid = Number(/^(\d+)-/.exec(name)?.[1] ?? Number.NaN);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a file's lines still owe: each key's last `owe` with no `done` after it. */
function owedIn(text: string): JournalOwed[] {
  const owed = new Map<string, JournalOwed>();
  const lines = text.split('\n').slice(0, ADOPTED_LINES_MAX);
  for (const raw of lines) {
    if (raw === '') continue;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      continue; // A line cut short by the crash: its answer was never given.
    }
    if (line.t === 'done') owed.delete(line.key);
    else owed.set(line.key, { ...line, input: authorizeInput(line.input) });
  }
  return [...owed.values()];
}

function storedInput(input: AuthorizeInput): StoredInput {
  const { amount, merchantAmount, ...rest } = input;
  return {
    ...rest,
    amount: amount.toFixed(),
    ...(merchantAmount === undefined
      ? {}
      : {
          merchantAmount:
            merchantAmount === null
              ? null
              : { amount: merchantAmount.amount.toFixed(), currency: merchantAmount.currency },
        }),
  };
}

function authorizeInput(stored: StoredInput): AuthorizeInput {
  const { amount, merchantAmount, ...rest } = stored;
  return {
    ...rest,
    amount: new Decimal(amount),
    ...(merchantAmount === undefined
      ? {}
      : {
          merchantAmount:
            merchantAmount === null
              ? null
              : { amount: new Decimal(merchantAmount.amount), currency: merchantAmount.currency },
        }),
  };
}
