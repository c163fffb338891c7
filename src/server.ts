/*
 * The service entry, for services that embed spendgate's HTTP interface
 * (`import { createServer, openStore } from 'spendgate/server'`). The root entry stays the
 * pure core, so that a library user loads no HTTP framework and no database driver.
 */

export {
  loadConfig,
  ConfigError,
  redisServer,
  type Config,
  type RedisTarget,
} from './config/env.js';
export { createServer, type ServerConfig, type ServerDependencies } from './http/server.js';
export { createRedis } from './http/health.js';
export { openStore, type Store, type StoreOptions } from './store/store.js';
export { createPgClient } from './store/sql/pg-client.js';
export { createPgliteClient } from './store/sql/pglite-client.js';
