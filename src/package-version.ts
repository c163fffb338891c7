import { readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * The package's version, from package.json: the one version `--version`, the OpenAPI document
 * and its reference page show. src/ and dist/ both sit one folder below the package's root.
 */
export function packageVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  return version;
}
