// openai-agents-many.mjs N K - N concurrent turns of @openai/agents in one
// Node process, against the mock model.
//
// The agent of openai-agents.mjs (one tool, add(a, b) = a + b, chat
// completions to $OPENAI_BASE_URL, bench/mockllm.py started with the same
// K), made once; then N run()s of it at once, each its own conversation
// (the user says "go"; the mock asks for K additions, then answers "done
// after K steps"), awaited together.  bench/serve-many.sh runs it as the
// peer of N concurrent runs through agentrt-serve.
//
// Prints one JSON line: {n, k, ok, wall_ms, cpu_ms, peak_pss_kib,
// start_pss_kib, samples}.  wall_ms and cpu_ms (process.cpuUsage(), user +
// system, this process) are from just before the first run() to the end of
// the last, so module loading and the agent's set-up are outside them;
// peak_pss_kib is the largest Pss of /proc/self/smaps_rollup, sampled
// every 100 ms (and once at the start and at the end) while the runs go.
// ok counts the runs whose answer was "done after K steps"; exits 1 unless
// all N were.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import {
  Agent, run, tool, setTracingDisabled, OpenAIChatCompletionsModel,
} from '@openai/agents';
import { z } from 'zod';

const n = Number(process.argv[2]);
const k = Number(process.argv[3]);
if (!Number.isInteger(n) || n < 1 || !Number.isInteger(k) || k < 0) {
  console.error('usage: node openai-agents-many.mjs N K');
  process.exit(2);
}
setTracingDisabled(true);

const client = new OpenAI({
  apiKey: process.env.OPENAI_API_KEY || 'sk-bench-dummy',
  baseURL: process.env.OPENAI_BASE_URL || 'http://127.0.0.1:8089/v1',
  maxRetries: 0,
});
const agent = new Agent({
  name: 'bench',
  instructions: 'Call add until told to stop.',
  model: new OpenAIChatCompletionsModel(client, 'mock-model'),
  tools: [tool({
    name: 'add',
    description: 'a+b',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => String(a + b),
  })],
});

function pss() {
  const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'));
  return m ? Number(m[1]) : 0;
}

const want = `done after ${k} steps`;
const startPss = pss();
let peak = startPss;
let samples = 1;
const sampler = setInterval(() => { peak = Math.max(peak, pss()); samples += 1; }, 100);
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
const answers = await Promise.all(Array.from({ length: n }, () =>
  run(agent, 'go', { maxTurns: k + 10 }).then((r) => String(r.finalOutput),
    (e) => { console.error(`openai-agents-many: a run failed: ${e?.stack || e}`); return null; })));
const wall = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
peak = Math.max(peak, pss());
samples += 1;
const ok = answers.filter((a) => a === want).length;
for (const a of answers) {
  if (a !== null && a !== want) console.error(`openai-agents-many: a run answered ${JSON.stringify(a)}`);
}
console.log(JSON.stringify({
  n, k, ok,
  wall_ms: Number(wall.toFixed(1)),
  cpu_ms: Number(((cpu.user + cpu.system) / 1000).toFixed(1)),
  peak_pss_kib: peak,
  start_pss_kib: startPss,
  samples,
}));
process.exit(ok === n ? 0 : 1);
