import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/store/invariants.js';
import { networkId } from '../support/authorize.js';
import {
  authorizationBody,
  fleetAccount,
  fundedVaultCard,
  allWorkDone,
  receivedIds,
  type FleetAccount,
  subscribe,
  useFleet,
} from '../support/fleet.js';
import { sleep } from '../support/processes.js';
import type { Outcome, RoundRobin } from '../support/round-robin.js';

/**
 * A rolling restart under load: three API processes and a worker process; a steady load of
 * authorizations, internal transfers, clearing batches and external SOL transfers goes
 * through a round robin while each API process in turn is taken out of rotation, drained,
 * stopped with SIGTERM, started again on its port and put back once ready. Every request is
 * answered (none fails), no approved authorization is missing from the ledger, every event
 * reaches the webhook receiver, and every job ends: the clearing batches are posted, the
 * external transfers are completed on the chain, no webhook job is left in the queue.
 */
/** Clients sending at once, and the pause each takes between two requests. */
const CLIENTS = 5;
const PAUSE_MS = 50;
/** Load with every process in rotation before the first stop and after each restart. */
const SETTLE_MS = 1_000;
const DRAIN_MS_MAX = 15_000;
const DONE_MS_MAX = 60_000;
/** Approved authorizations put in one clearing batch, at most. */
const BATCH_MAX = 100;

type Kind = 'authorize' | 'transfer' | 'settlement' | 'external';

interface Sent {
  readonly kind: Kind;
  readonly outcome: Outcome;
}

describe('a rolling restart of the API processes under load', () => {
  const started = useFleet({ apis: 3, workers: 1, chain: true });

  it('answers every request and loses no authorization, event or job', async () => {
    const { engines: opened, receiver: hooks, fleet, robin } = started();
    const { store } = opened;
    const account = await fleetAccount(store);
    await subscribe(store, account.scope, hooks);
    const usdc = await fundedVaultCard(store, account.scope, '1000000');
    const { vaultId: payeeId } = await fundedVaultCard(store, account.scope, '0');
    const { vaultId: solVaultId } = await fundedVaultCard(store, account.scope, '10', 'SOL');
    const load = steadyLoad(robin, account, { ...usdc, payeeId, solVaultId });

    await sleep(SETTLE_MS);
    const putBackAt: number[] = [];
    for (const [index, api] of fleet.apis.entries()) {
      robin.takeOut(index);
      await robin.drained(index, DRAIN_MS_MAX);
      expect(await api.child.stop('SIGTERM'), api.child.output()).toEqual({
        code: 0,
        signal: null,
      });
      await fleet.restart(api);
      robin.putBack(index);
      putBackAt.push(load.sent.length);
      await sleep(SETTLE_MS);
    }
    const sent = await load.stop();

    // Every request answered, with success; each restarted process answered some after it.
    const failed = sent.filter(({ outcome }) => !outcome.answered || outcome.status >= 300);
    expect(failed.slice(0, 5)).toEqual([]);
    for (const kind of ['authorize', 'transfer', 'settlement', 'external'] as const)
      expect(sent.filter((each) => each.kind === kind).length, kind).toBeGreaterThan(0);
    for (const [index, from] of putBackAt.entries())
      expect(
        sent.slice(from).filter(({ outcome }) => outcome.member === index).length,
      ).toBeGreaterThan(0);

    // Every approved authorization is in the ledger, held or captured.
    const approved = sent
      .filter(({ kind, outcome }) => kind === 'authorize' && bodyOf(outcome).approved === true)
      .map(({ outcome }) => String(bodyOf(outcome).id));
    const { rows: held } = await store.client.query<{ id: string }>(
      `SELECT id FROM transactions WHERE vault_id = $1 AND type = 'card_authorization'
         AND status IN ('pending', 'completed')`,
      [usdc.vaultId],
    );
    expect(new Set(held.map((row) => row.id))).toEqual(new Set(approved));

    await allWorkDone(
      opened,
      fleet,
      account.scope.accountId,
      () => receivedIds(hooks),
      DONE_MS_MAX,
    );
    const { rows: outcomes } = await store.client.query<{ what: string }>(
      `SELECT 'settlement ' || id AS what FROM settlements
         WHERE account_id = $1 AND captured_count <> record_count
       UNION ALL
       SELECT 'transfer ' || id FROM transfers WHERE account_id = $1 AND status <> 'completed'`,
      [account.scope.accountId],
    );
    expect(outcomes).toEqual([]);
    expect(hooks.received.filter((delivery) => !delivery.verified)).toEqual([]);
    expect(await checkInvariants(store.client)).toEqual([]);
  });
});

/**
 * CLIENTS clients sending, each after the other's answer and a pause, until stopped: mostly
 * authorizations of 1 USDC, an internal transfer of 1 USDC every fourth request, a clearing
 * batch of the approvals not yet batched every 25th, an external transfer of 0.001 SOL to a
 * new address every 50th. `stop` resolves with every request sent and its outcome.
 */
function steadyLoad(
  robin: RoundRobin,
  account: FleetAccount,
  vaults: { vaultId: string; cardId: string; payeeId: string; solVaultId: string },
): { readonly sent: readonly Sent[]; stop(): Promise<Sent[]> } {
  const sent: Sent[] = [];
  const unbatched: string[] = [];
  let running = true;
  let count = 0;
  const one = async (): Promise<void> => {
    count += 1;
    const { kind, key, path, body } = nextRequest(count, account, vaults, unbatched);
    const outcome = await robin.send(key, 'POST', path, body);
    sent.push({ kind, outcome });
    const answer = outcome.answered ? outcome.body : {};
    if (kind === 'authorize' && answer.approved === true) unbatched.push(String(answer.id));
  };
  const client = async (): Promise<void> => {
    while (running) {
      await one();
      await sleep(PAUSE_MS);
    }
  };
  const clients = Array.from({ length: CLIENTS }, () => client());
  return {
    sent,
    async stop() {
      running = false;
      await Promise.all(clients);
      return sent;
    },
  };
}

function nextRequest(
  count: number,
  account: FleetAccount,
  vaults: { vaultId: string; cardId: string; payeeId: string; solVaultId: string },
  unbatched: string[],
): { kind: Kind; key: string; path: string; body: unknown } {
  if (count % 50 === 0)
    return {
      kind: 'external',
      key: account.key,
      path: '/v1/transfers/external',
      body: {
        fromVaultId: vaults.solVaultId,
        address: Keypair.generate().publicKey.toBase58(),
        amount: '0.001',
      },
    };
  if (count % 25 === 0 && unbatched.length > 0)
    return {
      kind: 'settlement',
      key: account.networkKey,
      path: '/v1/settlements',
      body: {
        records: unbatched.splice(0, BATCH_MAX).map((authorizationId) => ({ authorizationId })),
      },
    };
  if (count % 4 === 0)
    return {
      kind: 'transfer',
      key: account.key,
      path: '/v1/transfers',
      body: { fromVaultId: vaults.vaultId, toVaultId: vaults.payeeId, amount: '1' },
    };
  return {
    kind: 'authorize',
    key: account.networkKey,
    path: '/v1/authorizations',
    body: authorizationBody(vaults.cardId, networkId()),
  };
}

function bodyOf(outcome: Outcome): Record<string, unknown> {
  return outcome.answered ? outcome.body : {};
}
