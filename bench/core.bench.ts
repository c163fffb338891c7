/**
 * Core benchmarks (`npm run bench`): the compiled evaluator against json-rules-engine on the
 * same rules, in one run, so the ratio holds however noisy the machine is.
 *
 * Sub-microsecond calls are timed in batches of BATCH calls (a timer read costs about as much
 * as a decision); their median and p99 are of the per-call average within a batch.
 */
import { Bench, type Task } from 'tinybench';
import { Engine } from 'json-rules-engine';
import { compilePolicy, decide } from '../src/index.js';
import {
  flatInput,
  flatReferenceEngine,
  FLAT_RULES,
  HUNDRED_RULE_POLICY,
  ORDINARY_PURCHASE,
  REALISTIC_POLICY,
  realisticReferenceEngine,
  referenceFacts,
  spendgateInput,
} from './workloads.js';

const BATCH = 100;
const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 2000);

const realisticPolicy = compilePolicy(REALISTIC_POLICY, { currency: 'USDC' });
const realisticInput = { ...spendgateInput(ORDINARY_PURCHASE), policy: realisticPolicy };
const realisticEngine = realisticReferenceEngine();
const realisticFacts = referenceFacts(ORDINARY_PURCHASE);

// In shadow mode every rule is evaluated and every match reported, as json-rules-engine does.
const flatPolicy = compilePolicy(
  { rules: FLAT_RULES.map((rule) => ({ ...rule, mode: 'shadow' })) },
  { currency: 'USDC' },
);
const flatDecisionInput = flatInput();
const flatEngine = flatReferenceEngine();

// Keeps the optimiser from discarding work whose result is never read.
let sink = 0;

const bench = new Bench({ time: TIME_MS, warmupTime: 500 });

bench
  .add('w1 realistic policy: spendgate compiled decide()', () => {
    for (let call = 0; call < BATCH; call++) sink += decide(realisticInput).approved ? 1 : 0;
  })
  .add('w1 realistic policy: json-rules-engine', async () => {
    const { results } = await realisticEngine.run(realisticFacts);
    sink += results.length;
  })
  .add('w2 30 flat rules: spendgate compiled (all rules)', () => {
    for (let call = 0; call < BATCH; call++) {
      sink += flatPolicy.shadowMatches(flatDecisionInput).length;
    }
  })
  .add('w2 30 flat rules: json-rules-engine (all rules)', async () => {
    const { results } = await flatEngine.run(realisticFacts);
    sink += results.length;
  })
  .add('w3 compile a 100-rule policy: spendgate compilePolicy()', () => {
    sink += compilePolicy(HUNDRED_RULE_POLICY, { currency: 'USDC' }).checks.length;
  })
  .add('w3 load the same 100 rules: new json-rules-engine Engine()', () => {
    const engine = new Engine(
      HUNDRED_RULE_POLICY.rules.map((rule) => ({ ...rule, event: { type: rule.name } })) as never,
    );
    sink += engine === undefined ? 0 : 1;
  });

await bench.run();

interface Row {
  task: string;
  medianUs: number;
  p99Us: number;
  samples: number;
}

function row(task: Task, callsPerSample: number): Row {
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

const [w1Compiled, w1Reference, w2Compiled, w2Reference, w3Compiled, w3Reference] = bench.tasks;
if (!w1Compiled || !w1Reference || !w2Compiled || !w2Reference || !w3Compiled || !w3Reference)
  throw new Error('missing tasks');
const rows: [Row, Row][] = [
  [row(w1Compiled, BATCH), row(w1Reference, 1)],
  [row(w2Compiled, BATCH), row(w2Reference, 1)],
  [row(w3Compiled, 1), row(w3Reference, 1)],
];

const format = (us: number) =>
  us < 10 ? us.toFixed(3) : us < 1000 ? us.toFixed(1) : us.toFixed(0);
console.log(
  `\nnode ${process.version}, ${TIME_MS} ms per task, per-call figures in microseconds\n`,
);
console.log('| workload | engine | median µs | p99 µs | median ratio |');
console.log('|---|---|---:|---:|---:|');
for (const [compiled, reference] of rows) {
  const ratio = reference.medianUs / compiled.medianUs;
  const shown =
    ratio >= 1 ? `**${ratio.toFixed(0)}x** faster` : `${(1 / ratio).toFixed(1)}x slower`;
  const [workload, compiledEngine] = compiled.task.split(': ');
  const referenceEngine = reference.task.split(': ')[1];
  console.log(
    `| ${workload} | ${compiledEngine} | ${format(compiled.medianUs)} | ${format(compiled.p99Us)} | ${shown} |`,
  );
  console.log(
    `| | ${referenceEngine} | ${format(reference.medianUs)} | ${format(reference.p99Us)} | 1x |`,
  );
}

const [w1, w2, w3] = rows;
const targets = [
  [
    'w1 compiled at least 200x faster than json-rules-engine',
    w1 !== undefined && w1[1].medianUs / w1[0].medianUs >= 200,
  ],
  [
    'w2 compiled at least 200x faster than json-rules-engine',
    w2 !== undefined && w2[1].medianUs / w2[0].medianUs >= 200,
  ],
  ['w1 median decision at most 2 µs', w1 !== undefined && w1[0].medianUs <= 2],
  ['w3 compiling 100 rules in at most 1 ms', w3 !== undefined && w3[0].medianUs <= 1000],
] as const;
console.log('');
for (const [target, met] of targets) console.log(`${met ? 'met   ' : 'MISSED'} ${target}`);
if (sink === 0) console.log('(sink is zero: nothing was computed)');
