import { z } from 'zod';

/**
 * Settings from the environment (contract section 15), validated once at start: a missing or
 * malformed setting stops the start with a message naming it. Settings the service does not
 * use yet join this schema with the issue that uses them.
 */
const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly logLevel: z.infer<typeof configSchema>['LOG_LEVEL'];
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join('.')}: ${issue.message}`,
    );
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return { port: result.data.PORT, host: result.data.HOST, logLevel: result.data.LOG_LEVEL };
}
