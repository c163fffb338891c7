import { describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/index.js';
import { OPERATION_ROUTES, type OperationRoutes } from '../../src/store/replica-routes.js';

/*
 * Each operation's route when the store has a replica (store/replica-routes.ts). Its coverage
 * is the compiler's: the lines marked @ts-expect-error below must fail to compile, so the
 * typecheck fails if a table without a route, or with an account read from what is no scope,
 * were ever accepted. The behaviour of the routes is read-replica.test.ts's, on a real pair.
 */

const withoutListVaults: Omit<OperationRoutes, 'listVaults'> = OPERATION_ROUTES;
// @ts-expect-error: an operation with no route declared does not compile.
const incomplete: OperationRoutes = withoutListVaults;

const scopeless: OperationRoutes = {
  ...OPERATION_ROUTES,
  // @ts-expect-error: getAccount takes an account id, not a scope: no route may read one.
  getAccount: { serve: 'replica', accountOf: (scope: Scope) => scope.accountId },
};

describe('the routes of the store operations (replica-routes.ts)', () => {
  it('are declared for every operation, and the type checks stand', () => {
    expect(Object.keys(incomplete)).toContain('listTransactions');
    expect(Object.keys(scopeless).length).toBe(Object.keys(OPERATION_ROUTES).length);
  });

  it('send to the replica only the lists and histories that may lag', () => {
    const replica = Object.entries(OPERATION_ROUTES)
      .filter(([, route]) => route.serve === 'replica')
      .map(([name]) => name)
      .sort();
    expect(replica).toEqual([
      'getBacktest',
      'listBalanceSnapshots',
      'listCards',
      'listChainDeposits',
      'listPolicyVersions',
      'listTransactions',
      'listTransfers',
      'listVaults',
      'listWebhookDeliveries',
      'listWebhookEndpoints',
    ]);
  });

  it('read the account of each routed call from its scope', () => {
    const scope: Scope = { accountId: 'acct_routes', mode: 'test' };
    const routed = Object.entries(OPERATION_ROUTES).flatMap(([name, route]) =>
      route.serve === 'replica' || route.serve === 'write'
        ? [[name, (route.accountOf as (first: Scope) => string)(scope)] as const]
        : [],
    );
    expect(routed.length).toBeGreaterThan(40);
    for (const [name, account] of routed) expect(account, name).toBe('acct_routes');
  });
});
