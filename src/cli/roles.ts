/**
 * The roles of `spendgate serve --role` (serve.ts): the HTTP API, the workers, or both. A
 * module of its own so that the command line is read without loading the service.
 */
export type Role = 'api' | 'worker' | 'all';

export const ROLES: readonly Role[] = ['api', 'worker', 'all'];
