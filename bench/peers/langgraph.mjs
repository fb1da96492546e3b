// langgraph.mjs K - one turn of a LangGraph.js ReAct agent against the mock.
//
// createReactAgent with ChatOpenAI (chat completions, baseURL from
// $OPENAI_BASE_URL) and one tool, add(a, b) = a + b.  The user says "go";
// the mock asks for K additions, then answers "done after K steps", which
// this prints.  Exits 1 if the answer is anything else.
//
// With $COMPARE_AGENT, a JSON file {system, tools: [{name, description,
// input}]} (bench/large-agent.py, for compare.sh --large), the agent's
// prompt is its system and its tools are those, declared with their JSON
// Schemas: add(a, b) = a + b as above, the others return "ok".
import { readFileSync } from 'node:fs';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';

const k = Number(process.argv[2]);
if (!Number.isInteger(k) || k < 0) {
  console.error('usage: node langgraph.mjs K');
  process.exit(2);
}

const llm = new ChatOpenAI({
  model: 'mock-model',
  apiKey: process.env.OPENAI_API_KEY || 'sk-bench-dummy',
  configuration: { baseURL: process.env.OPENAI_BASE_URL || 'http://127.0.0.1:8089/v1' },
  maxRetries: 0,
  streaming: false,
});
let prompt;
let tools = [tool(async ({ a, b }) => String(a + b), {
  name: 'add',
  description: 'a+b',
  schema: z.object({ a: z.number(), b: z.number() }),
})];
if (process.env.COMPARE_AGENT) {
  const def = JSON.parse(readFileSync(process.env.COMPARE_AGENT, 'utf8'));
  prompt = def.system;
  tools = def.tools.map((t) => tool(
    t.name === 'add' ? async ({ a, b }) => String(a + b) : async () => 'ok',
    { name: t.name, description: t.description, schema: t.input },
  ));
}
const agent = createReactAgent({ llm, tools, ...(prompt === undefined ? {} : { prompt }) });

// Each step is two graph steps (model, tools), plus the final model call.
const out = await agent.invoke(
  { messages: [{ role: 'user', content: 'go' }] },
  { recursionLimit: 2 * k + 10 },
);
const text = String(out.messages.at(-1).content);
console.log(text);
process.exit(text === `done after ${k} steps` ? 0 : 1);
