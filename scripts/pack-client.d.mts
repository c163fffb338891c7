/** Types of scripts/pack-client.mjs, for the test that stages and installs the client. */

/** Builds @spendgate/client into `stageDir` (an empty folder), ready for `npm pack`; returns it. */
export declare function stageClient(stageDir: string): string;
