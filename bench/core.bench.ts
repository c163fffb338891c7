/**
 * Core benchmarks (`npm run bench:core`): the compiled evaluator against json-rules-engine on
 * the same rules, the policy compiler, and amount parsing, each beside a baseline measured in
 * the same run, so the ratio holds however noisy the machine is.
 *
 * Sub-microsecond calls are timed in batches of BATCH calls (a timer read costs about as much
 * as a decision); their median and p99 are of the per-call average within a batch.
 *
 * fast-json-rules-engine, a compiled engine of json-rules-engine's format, is measured beside
 * the evaluator too (issue 11: the evaluator stays at least 5x faster on the same rules) when
 * BENCH_FAST_JSON_RULES_ENGINE names its built ESM entry. It is not on npm (its package.json
 * says 0.0.0-development), so nothing here depends on it: build it outside the repository
 * (docs/performance.md, "The core: compiling and parsing", says how). Unset, the run says the
 * comparison was skipped.
 */
import { pathToFileURL } from 'node:url';
import { Bench, type Task } from 'tinybench';
import { Engine } from 'json-rules-engine';
import { compilePolicy, Decimal, decide, parseAmount, readInput } from '../src/index.js';
import { decimalComparisons, TEXT_COMPARISONS } from '../test/support/reference-engine.js';
import {
  flatInput,
  flatReferenceEngine,
  flatReferenceRules,
  FLAT_RULES,
  hundredReferenceRules,
  HUNDRED_RULE_POLICY,
  ORDINARY_PURCHASE,
  REALISTIC_POLICY,
  realisticReferenceEngine,
  realisticReferenceRules,
  referenceFacts,
  spendgateInput,
  THREE_CONDITION_POLICY,
  threeConditionReferenceEngine,
  threeConditionReferenceRules,
  withProjections,
  type ReferenceRule,
} from './workloads.js';

const BATCH = 100;
const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 2000);

const realisticPolicy = compilePolicy(REALISTIC_POLICY, { currency: 'USDC' });
// Read once at the edge (issue 38), as the service's authorize path does: decide() then
// decides without reading again. f6 times the reading on every call beside it.
const realisticInput = readInput({ ...spendgateInput(ORDINARY_PURCHASE), policy: realisticPolicy });
const realisticEngine = realisticReferenceEngine();
const realisticFacts = referenceFacts(ORDINARY_PURCHASE);

// In shadow mode every rule is evaluated and every match reported, as json-rules-engine does.
const flatPolicy = compilePolicy(
  { rules: FLAT_RULES.map((rule) => ({ ...rule, mode: 'shadow' })) },
  { currency: 'USDC' },
);
const flatDecisionInput = flatInput();

// Workload 7 (issue 38): 20 rules of 3 conditions, MCC block list, country allow list.
const threePolicy = compilePolicy(THREE_CONDITION_POLICY, { currency: 'USDC' });
const threeUnread = { ...spendgateInput(ORDINARY_PURCHASE), policy: threePolicy };
const threeInput = readInput(threeUnread);
const threeEngine = threeConditionReferenceEngine();
const flatEngine = flatReferenceEngine();

/**
 * The 100-rule policy with a structure no compile before it had: rule j's conditions wrapped
 * in not(not(...)) when bit j of `serial` is set. Same meaning, new generated source, so V8
 * parses it afresh instead of finding it in its cache of compiled code (w4).
 */
const SERIAL_BITS = 30;
function newStructure(serial: number): unknown {
  return {
    rules: HUNDRED_RULE_POLICY.rules.map((rule, index) =>
      index < SERIAL_BITS && ((serial >>> index) & 1) === 1
        ? { ...rule, conditions: { not: { not: (rule as { conditions?: unknown }).conditions } } }
        : rule,
    ),
  };
}
let serial = 0;
let freshPolicy: unknown = null;

// Amounts as clients send them (w5): a decimal string and a JSON number.
const AMOUNT_TEXT = '125.50';
const AMOUNT_NUMBER = 42.5;

const loadHundredRules = (): Engine =>
  new Engine(
    HUNDRED_RULE_POLICY.rules.map((rule) => ({ ...rule, event: { type: rule.name } })) as never,
  );

// Keeps the optimiser from discarding work whose result is never read.
let sink = 0;

// spendgate's side of workloads 1 to 3, timed against json-rules-engine and, when it is named,
// fast-json-rules-engine: each baseline beside a measure of its own run.
const decideRealistic = () => {
  for (let call = 0; call < BATCH; call++) sink += decide(realisticInput).approved ? 1 : 0;
};
const matchFlatRules = () => {
  for (let call = 0; call < BATCH; call++)
    sink += flatPolicy.shadowMatches(flatDecisionInput).length;
};
const decideThree = () => {
  for (let call = 0; call < BATCH; call++) sink += decide(threeInput).approved ? 1 : 0;
};
const decideThreeReading = () => {
  for (let call = 0; call < BATCH; call++) sink += decide(threeUnread).approved ? 1 : 0;
};
const compileHundredRules = () => {
  sink += compilePolicy(HUNDRED_RULE_POLICY, { currency: 'USDC' }).checks.length;
};

const bench = new Bench({ time: TIME_MS, warmupTime: 500 });

bench
  .add('w1 realistic policy: spendgate compiled decide()', decideRealistic)
  .add('w1 realistic policy: json-rules-engine', async () => {
    const { results } = await realisticEngine.run(realisticFacts);
    sink += results.length;
  })
  .add('w2 30 flat rules: spendgate compiled (all rules)', matchFlatRules)
  .add('w2 30 flat rules: json-rules-engine (all rules)', async () => {
    const { results } = await flatEngine.run(realisticFacts);
    sink += results.length;
  })
  .add('w3 compile a 100-rule policy: spendgate compilePolicy()', compileHundredRules)
  .add('w3 load the same 100 rules: new json-rules-engine Engine()', () => {
    sink += loadHundredRules() === undefined ? 0 : 1;
  })
  .add(
    'w4 compile a 100-rule policy of new structure: spendgate compilePolicy()',
    () => {
      sink += compilePolicy(freshPolicy, { currency: 'USDC' }).checks.length;
    },
    {
      beforeEach: () => {
        serial += 1;
        freshPolicy = newStructure(serial);
      },
    },
  )
  .add('w4 load the same 100 rules: new json-rules-engine Engine()', () => {
    sink += loadHundredRules() === undefined ? 0 : 1;
  })
  .add('w5 parse the amount "125.50": spendgate parseAmount()', () => {
    for (let call = 0; call < BATCH; call++) sink += parseAmount(AMOUNT_TEXT, 'USDC').e;
  })
  .add('w5 parse the amount "125.50": new Decimal() (decimal.js alone)', () => {
    for (let call = 0; call < BATCH; call++) sink += new Decimal(AMOUNT_TEXT).e;
  })
  .add('w6 parse the amount 42.5: spendgate parseAmount()', () => {
    for (let call = 0; call < BATCH; call++) sink += parseAmount(AMOUNT_NUMBER, 'USDC').e;
  })
  .add('w6 parse the amount 42.5: new Decimal() (decimal.js alone)', () => {
    for (let call = 0; call < BATCH; call++) sink += new Decimal(AMOUNT_NUMBER).e;
  })
  .add('w7 20 rules of 3 conditions: spendgate compiled decide()', decideThree)
  .add('w7 20 rules of 3 conditions: json-rules-engine', async () => {
    const { results } = await threeEngine.run(realisticFacts);
    sink += results.length;
  });

await bench.run();

interface Row {
  task: string;
  medianUs: number;
  p99Us: number;
  samples: number;
}

function row(task: Task | undefined, callsPerSample: number): Row {
  if (task === undefined) throw new Error('missing task');
  const result = task.result;
  if (result.state !== 'completed')
    throw new Error(`${task.name} did not complete: ${result.state}`);
  const toUs = (ms: number) => (ms * 1000) / callsPerSample;
  return {
    task: task.name,
    medianUs: toUs(result.latency.p50),
    p99Us: toUs(result.latency.p99),
    samples: result.latency.samplesCount,
  };
}

const tasks = bench.tasks;
const calls = [BATCH, 1, BATCH, 1, 1, 1, 1, 1, BATCH, BATCH, BATCH, BATCH, BATCH, 1];
if (tasks.length !== calls.length) throw new Error('a task without its calls per sample');
const pairs: [Row, Row][] = [];
for (let index = 0; index < tasks.length; index += 2) {
  pairs.push([
    row(tasks[index], calls[index] as number),
    row(tasks[index + 1], calls[index + 1] as number),
  ]);
}
const [w1, w2, w3, w4, w5, w6, w7] = pairs;
if (!w1 || !w2 || !w3 || !w4 || !w5 || !w6 || !w7) throw new Error('missing workloads');

const format = (us: number) =>
  us < 10 ? us.toFixed(3) : us < 1000 ? us.toFixed(1) : us.toFixed(0);
const ratioOf = ([measured, baseline]: [Row, Row]) => baseline.medianUs / measured.medianUs;
const shownRatio = (ratio: number) =>
  ratio >= 1
    ? `**${ratio.toFixed(ratio < 10 ? 1 : 0)}x** faster`
    : `${(1 / ratio).toFixed(1)}x slower`;

console.log(
  `\nnode ${process.version}, ${TIME_MS} ms per task, per-call figures in microseconds\n`,
);
console.log('| workload | engine | median µs | p99 µs | median ratio |');
console.log('|---|---|---:|---:|---:|');
for (const pair of pairs) {
  const [measured, baseline] = pair;
  const [workload, engine] = measured.task.split(': ');
  const baselineEngine = baseline.task.split(': ')[1];
  console.log(
    `| ${workload} | ${engine} | ${format(measured.medianUs)} | ${format(measured.p99Us)} | ${shownRatio(ratioOf(pair))} |`,
  );
  console.log(
    `| | ${baselineEngine} | ${format(baseline.medianUs)} | ${format(baseline.p99Us)} | 1x |`,
  );
}

interface Target {
  readonly name: string;
  readonly measured: string;
  readonly target: string;
  readonly met: boolean;
}

const atMost = (name: string, pair: [Row, Row], maxUs: number): Target => ({
  name,
  measured: `median ${format(pair[0].medianUs)} µs (baseline ${format(pair[1].medianUs)} µs, ${shownRatio(ratioOf(pair)).replaceAll('*', '')})`,
  target: `<= ${maxUs} µs`,
  met: pair[0].medianUs <= maxUs,
});
const fasterBy = (name: string, pair: [Row, Row], minRatio: number): Target => ({
  name,
  measured: `${ratioOf(pair).toFixed(ratioOf(pair) < 10 ? 1 : 0)}x (median ${format(pair[0].medianUs)} µs against ${format(pair[1].medianUs)} µs)`,
  target: `>= ${minRatio}x`,
  met: ratioOf(pair) >= minRatio,
});

const fastEngine = await fastEngineTargets();
const targets: Target[] = [
  fasterBy('w1 compiled against json-rules-engine', w1, 200),
  fasterBy('w2 compiled against json-rules-engine', w2, 200),
  fasterBy('w7 compiled against json-rules-engine', w7, 200),
  atMost('w1 median decision', w1, 2),
  // Compiling a 100-rule policy, median at most 0.3 ms (docs/performance.md).
  atMost('w3 compiling 100 rules', w3, 300),
  // Parsing an amount, median at most 0.2 µs (docs/performance.md).
  atMost('w5 parseAmount of a decimal string', w5, 0.2),
  ...fastEngine,
];
console.log('');
for (const { name, measured, target, met } of targets) {
  console.log(`${met ? 'met   ' : 'MISSED'} ${name}: ${measured}; target ${target}`);
}
// Reported without a target: V8 parses the new evaluator's source (w4), and JSON numbers (w6).
console.log(
  `info   w4 compiling 100 rules of a structure not compiled before: median ${format(w4[0].medianUs)} µs`,
);
console.log(
  `info   w6 parseAmount of a JSON number: median ${format(w6[0].medianUs)} µs (new Decimal: ${format(w6[1].medianUs)} µs)`,
);
if (fastEngine.length === 0) {
  console.log('skipped fast-json-rules-engine: BENCH_FAST_JSON_RULES_ENGINE names no build of it');
}
if (sink === 0) console.log('(sink is zero: nothing was computed)');

/**
 * The workloads' paths (`$.city`: a property, or properties in turn), which is all the JSONPath
 * fast-json-rules-engine needs here; it bundles none (json-rules-engine uses jsonpath-plus).
 */
function simplePath(value: unknown, path: string): unknown {
  if (!/^\$(\.\w+)+$/.test(path)) throw new Error(`a path the bench does not resolve: ${path}`);
  let found = value;
  for (const key of path.slice(2).split('.')) {
    found =
      typeof found === 'object' && found !== null
        ? (found as Record<string, unknown>)[key]
        : undefined;
  }
  return found;
}

/** The part of fast-json-rules-engine's API the comparison calls. */
interface FastEngineModule {
  compile(
    rules: readonly ReferenceRule[],
    options: {
      operators: Record<string, (a: never, b: never) => boolean>;
      allowUndefinedFacts: boolean;
      pathResolver: (value: unknown, path: string) => unknown;
    },
  ): { run(facts: Record<string, unknown>): { events: readonly { type: string }[] } };
}

/**
 * fast-json-rules-engine on workloads 1 to 3's rules, with json-rules-engine's operators for
 * money and text (so it compares as the reference does) and workload 1's derived facts computed
 * on each call, as json-rules-engine computes them. Its rules' outcomes must be the reference's
 * before any figure is printed. Empty without BENCH_FAST_JSON_RULES_ENGINE.
 */
async function fastEngineTargets(): Promise<Target[]> {
  const entry = process.env.BENCH_FAST_JSON_RULES_ENGINE;
  if (entry === undefined || entry === '') return [];
  const fast = (await import(pathToFileURL(entry).href)) as FastEngineModule;
  const options = {
    operators: { ...decimalComparisons(), ...TEXT_COMPARISONS },
    allowUndefinedFacts: true,
    pathResolver: simplePath,
  };
  const realisticFast = fast.compile(realisticReferenceRules(), options);
  const flatFast = fast.compile(flatReferenceRules(), options);
  const threeFast = fast.compile(threeConditionReferenceRules(), options);
  // f5: the same rules with money as JSON numbers and the engine's native operators, as a
  // run from outside the project may write them (no decimal.js on its side).
  const nativeRules = threeConditionReferenceRules().map(
    (rule): ReferenceRule =>
      JSON.parse(JSON.stringify(rule).replaceAll('"decimal:', '"'), (key, value: unknown) =>
        key === 'value' && typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
      ) as ReferenceRule,
  );
  const nativeFacts = { ...realisticFacts, amount: Number(realisticFacts.amount) };
  const nativeFast = fast.compile(nativeRules, {
    operators: {},
    allowUndefinedFacts: true,
    pathResolver: simplePath,
  });
  const hundredRules = hundredReferenceRules();
  const matched = async (engine: Engine, facts: Record<string, unknown>) =>
    (await engine.run(facts)).results.map((result) => result.name).join();
  const fastMatched = (
    engine: ReturnType<FastEngineModule['compile']>,
    facts: Record<string, unknown>,
  ) =>
    engine
      .run(facts)
      .events.map((event) => event.type)
      .join();
  if (
    fastMatched(realisticFast, withProjections(realisticFacts)) !==
      (await matched(realisticEngine, realisticFacts)) ||
    fastMatched(flatFast, realisticFacts) !== (await matched(flatEngine, realisticFacts)) ||
    fastMatched(threeFast, realisticFacts) !== (await matched(threeEngine, realisticFacts)) ||
    fastMatched(nativeFast, nativeFacts) !== (await matched(threeEngine, realisticFacts))
  ) {
    throw new Error('fast-json-rules-engine and json-rules-engine disagree on the workloads');
  }
  const fastBench = new Bench({ time: TIME_MS, warmupTime: 500 });
  fastBench
    .add('f1 realistic policy: spendgate compiled decide()', decideRealistic)
    .add('f1 realistic policy: fast-json-rules-engine', () => {
      for (let call = 0; call < BATCH; call++) {
        sink += realisticFast.run(withProjections(realisticFacts)).events.length;
      }
    })
    .add('f2 30 flat rules: spendgate compiled (all rules)', matchFlatRules)
    .add('f2 30 flat rules: fast-json-rules-engine (all rules)', () => {
      for (let call = 0; call < BATCH; call++) sink += flatFast.run(realisticFacts).events.length;
    })
    .add('f3 compile a 100-rule policy: spendgate compilePolicy()', compileHundredRules)
    .add('f3 compile the same 100 rules: fast-json-rules-engine compile()', () => {
      sink += fast.compile(hundredRules, options) === undefined ? 0 : 1;
    })
    .add('f4 20 rules of 3 conditions: spendgate compiled decide()', decideThree)
    .add('f4 20 rules of 3 conditions: fast-json-rules-engine', () => {
      for (let call = 0; call < BATCH; call++) sink += threeFast.run(realisticFacts).events.length;
    })
    .add('f5 20 rules of 3 conditions: spendgate compiled decide()', decideThree)
    .add('f5 20 rules of 3 conditions: fast-json-rules-engine, native operators', () => {
      for (let call = 0; call < BATCH; call++) sink += nativeFast.run(nativeFacts).events.length;
    })
    .add(
      'f6 20 rules of 3 conditions: spendgate decide() reading its input on every call',
      decideThreeReading,
    )
    .add('f6 20 rules of 3 conditions: fast-json-rules-engine, native operators', () => {
      for (let call = 0; call < BATCH; call++) sink += nativeFast.run(nativeFacts).events.length;
    });
  await fastBench.run();
  const [f1, f2, f3, f4, f5, f6] = [0, 2, 4, 6, 8, 10].map((index): [Row, Row] => {
    const callsPerSample = index === 4 ? 1 : BATCH;
    return [
      row(fastBench.tasks[index], callsPerSample),
      row(fastBench.tasks[index + 1], callsPerSample),
    ];
  });
  if (
    f1 === undefined ||
    f2 === undefined ||
    f3 === undefined ||
    f4 === undefined ||
    f5 === undefined ||
    f6 === undefined
  )
    throw new Error('missing pairs');
  return [
    fasterBy('f1 compiled against fast-json-rules-engine', f1, 5),
    fasterBy('f2 compiled against fast-json-rules-engine', f2, 5),
    fasterBy('f4 compiled against fast-json-rules-engine', f4, 5),
    fasterBy('f5 compiled against fast-json-rules-engine, native operators', f5, 5),
    atMost('f3 compiling 100 rules, fast-json-rules-engine beside it', f3, 300),
    {
      // Without a target: what a caller that does not read once pays (issue 38).
      name: 'f6 (info) decide() reading its input on every call, native operators beside it',
      measured: `${ratioOf(f6).toFixed(1)}x (median ${format(f6[0].medianUs)} µs against ${format(f6[1].medianUs)} µs)`,
      target: 'none',
      met: true,
    },
  ];
}
