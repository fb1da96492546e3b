// openai-agents.mjs K - one turn of @openai/agents against the mock model.
//
// The agent has one tool, add(a, b) = a + b, and talks chat completions to
// $OPENAI_BASE_URL (bench/mockllm.py started with the same K).  The user
// says "go"; the mock asks for K additions, then answers "done after K
// steps", which this prints.  Exits 1 if the answer is anything else.
//
// With $COMPARE_AGENT, a JSON file {system, tools: [{name, description,
// input}]} (bench/large-agent.py, for compare.sh --large), the agent's
// instructions are its system and its tools are those, declared with their
// JSON Schemas (strict: false, as they are not in OpenAI's strict form):
// add(a, b) = a + b as above, the others return "ok".
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import {
  Agent, run, tool, setTracingDisabled, OpenAIChatCompletionsModel,
} from '@openai/agents';
import { z } from 'zod';

const k = Number(process.argv[2]);
if (!Number.isInteger(k) || k < 0) {
  console.error('usage: node openai-agents.mjs K');
  process.exit(2);
}
setTracingDisabled(true);

const client = new OpenAI({
  apiKey: process.env.OPENAI_API_KEY || 'sk-bench-dummy',
  baseURL: process.env.OPENAI_BASE_URL || 'http://127.0.0.1:8089/v1',
  maxRetries: 0,
});
let instructions = 'Call add until told to stop.';
let tools = [tool({
  name: 'add',
  description: 'a+b',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
})];
if (process.env.COMPARE_AGENT) {
  const def = JSON.parse(readFileSync(process.env.COMPARE_AGENT, 'utf8'));
  instructions = def.system;
  tools = def.tools.map((t) => tool({
    name: t.name,
    description: t.description,
    parameters: t.input,
    strict: false,
    execute: t.name === 'add' ? async ({ a, b }) => String(a + b) : async () => 'ok',
  }));
}
const agent = new Agent({
  name: 'bench',
  instructions,
  model: new OpenAIChatCompletionsModel(client, 'mock-model'),
  tools,
});

const result = await run(agent, 'go', { maxTurns: k + 10 });
const text = String(result.finalOutput);
console.log(text);
process.exit(text === `done after ${k} steps` ? 0 : 1);
