/** Types of scripts/pack-core.mjs, for the tests that stage and install the packages. */

/** The clone's root folder. */
export declare const ROOT: string;
/** Builds @spendgate/core into `stageDir` (an empty folder), ready for `npm pack`; returns it. */
export declare function stageCore(stageDir: string): string;
/** Stages `spendgate` as `npm pack` packs it, in `stageDir` rather than the clone's dist/. */
export declare function stageMain(stageDir: string): string;
/** `npm pack` of a staged folder into `destination`; the tarball's path. */
export declare function pack(stageDir: string, destination: string): string;
/** The root package.json, parsed. */
export declare function rootManifest(): Record<string, unknown>;
/** Runs the TypeScript compiler with `config` written into `stageDir`. */
export declare function compile(stageDir: string, config: unknown): void;
