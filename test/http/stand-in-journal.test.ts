import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { StandInJournal, type JournalOwed } from '../../src/http/stand-in-journal.js';
import { MERCHANT } from '../support/authorize.js';

/**
 * The stand-in journal's file (http/stand-in-journal.ts): what a stopped process owed is taken
 * over once, by one process, with its amounts exact; recorded keys, and a line cut short by a
 * crash, are not owed.
 */
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const made = mkdtempSync(join(tmpdir(), 'sg-journal-test-'));
  folders.push(made);
  return made;
}

/** The pid of a process that has ended (a child run to completion). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

const scope = { accountId: 'acct_1', mode: 'test' as const };

function owed(networkTransactionId: string, amount: string, approved = true): JournalOwed {
  return {
    key: `${scope.accountId} ${scope.mode} ${networkTransactionId}`,
    scope,
    approved,
    input: {
      cardId: 'card_1',
      amount: new Decimal(amount),
      currency: 'USD',
      merchant: MERCHANT,
      networkTransactionId,
      merchantAmount: { amount: new Decimal('1234'), currency: 'JPY' },
      partialApprovalAllowed: true,
      amountScale: 2,
    },
  };
}

describe('the stand-in journal', () => {
  it("takes over what a stopped process owed, once, and leaves a live process's file alone", async () => {
    const dir = folder();
    // A stopped process's file, written as a journal writes it, then cut short mid-line.
    const stopped = await StandInJournal.open(dir);
    await stopped.owe(owed('ntx_a', '10.50'));
    await stopped.owe(owed('ntx_b', '3.25', false));
    await stopped.owe(owed('ntx_c', '7'));
    await stopped.recorded(owed('ntx_b', '0').key);
    // Answered again (a repeat the store did not take yet): the last answer is the one owed.
    await stopped.owe(owed('ntx_a', '10.50', false));
    const [file] = readdirSync(dir);
    const orphan = `${String(deadPid())}-feedface.jsonl`;
    await rename(join(dir, file ?? ''), join(dir, orphan));
    appendFileSync(join(dir, orphan), '{"t":"owe","key":"acct_1 test ntx_torn","sco');
    // A live process's file (this one's pid): never taken.
    writeFileSync(join(dir, `${String(process.pid)}-live.jsonl`), '');

    const first = await StandInJournal.open(dir);
    const taken = await first.adoptOrphans();
    expect(taken.map((entry) => [entry.input.networkTransactionId, entry.approved]).sort()).toEqual(
      [
        ['ntx_a', false],
        ['ntx_c', true],
      ],
    );
    const a = taken.find((entry) => entry.input.networkTransactionId === 'ntx_a');
    expect(a?.input.amount.toFixed()).toBe('10.5');
    expect(a?.input.merchantAmount?.amount.toFixed()).toBe('1234');
    expect(a?.input).toMatchObject({ partialApprovalAllowed: true, amountScale: 2 });
    expect(readdirSync(dir)).not.toContain(orphan);
    expect(readdirSync(dir)).toContain(`${String(process.pid)}-live.jsonl`);
    // Taken over means written again here: a second process finds nothing more to take.
    const second = await StandInJournal.open(dir);
    expect(await second.adoptOrphans()).toEqual([]);
    await second.close();
    // Once recorded and closed, nothing of it is left on the disk.
    for (const entry of taken) await first.recorded(entry.key);
    await first.close();
    expect(readdirSync(dir)).toEqual([`${String(process.pid)}-live.jsonl`]);
    await stopped.close();
  });

  it('keeps every amount exact through the file', async () => {
    const dir = folder();
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 0n, max: 10n ** 20n }),
        fc.integer({ min: 0, max: 9 }),
        async (units, scale) => {
          const amount = new Decimal(units.toString()).div(new Decimal(10).pow(scale)).toFixed();
          const writer = await StandInJournal.open(dir);
          await writer.owe(owed('ntx_exact', amount));
          const [file] = readdirSync(dir).filter((name) =>
            name.startsWith(`${String(process.pid)}-`),
          );
          await rename(join(dir, file ?? ''), join(dir, `${String(deadPid())}-x.jsonl`));
          const reader = await StandInJournal.open(dir);
          const [taken] = await reader.adoptOrphans();
          expect(taken?.input.amount.equals(new Decimal(amount))).toBe(true);
          await reader.recorded(taken?.key ?? '');
          await reader.close();
          await writer.close();
          expect(readdirSync(dir)).toEqual([]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
