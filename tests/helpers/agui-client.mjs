// agui-client.mjs - @ag-ui/client's HttpAgent against agentrt-serve.
//
// Usage: node agui-client.mjs SCENARIO URL THREAD
//   tool        a frontend tool: the first run ends on its call, the
//               second carries the client's result and gets the answer
//   regenerate  a turn, then the same view up to the user's message
//               again: a second answer, on a branch of its own
//
// The client is the oracle: HttpAgent runs every stream through its own
// verifier (event order, ids) and applies the events to its messages, as
// a front-end would.  Each event it saw is also parsed by @ag-ui/core's
// EventSchemas.  Prints one JSON line a run: what the test checks.
// $AGUI_DIR holds the packages (node_modules), as make agui-core puts them.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.AGUI_DIR, "node_modules", "x.js"));
const { HttpAgent } = require("@ag-ui/client");
const { EventSchemas } = require("@ag-ui/core/schemas");

const [scenario, base, thread] = process.argv.slice(2);

// Runs the agent once; every event checked against the schema.
async function run(agent, params) {
  const events = [];
  const result = await agent.runAgent(params, {
    onEvent({ event }) {
      const r = EventSchemas.safeParse(event);
      if (!r.success)
        throw new Error(`not an AG-UI event: ${JSON.stringify(event)}: ${r.error.message}`);
      events.push(event.type);
    },
  });
  return { result, events };
}

const summary = (agent, r) => ({
  events: r.events,
  newMessages: r.result.newMessages.map((m) => [m.role, m.content ?? null,
    (m.toolCalls || []).map((c) => c.function.name)]),
  messages: agent.messages.map((m) => m.role),
  last: agent.messages.at(-1)?.content ?? null,
});

const tools = [{ name: "pick_color", description: "the page asks its user",
  parameters: { type: "object", properties: { among: { type: "array" } } } }];

if (scenario === "tool") {
  const agent = new HttpAgent({ url: `${base}agents/client-tools`, threadId: thread });
  agent.addMessage({ id: "u1", role: "user", content: "pick one" });
  const r1 = await run(agent, { tools });
  console.log(JSON.stringify(summary(agent, r1)));
  const call = agent.messages.at(-1).toolCalls[0];
  agent.addMessage({ id: "r1", role: "tool", toolCallId: call.id, content: "blue" });
  const r2 = await run(agent, { tools });
  console.log(JSON.stringify(summary(agent, r2)));
} else if (scenario === "regenerate") {
  const agent = new HttpAgent({ url: `${base}agents/calc`, threadId: thread });
  agent.addMessage({ id: "u1", role: "user", content: "What is 17*23?" });
  const r1 = await run(agent);
  console.log(JSON.stringify(summary(agent, r1)));
  const first = agent.messages.map((m) => m.id);
  // Regenerate: the view cut back to the user's message, run again.
  agent.setMessages(agent.messages.slice(0, 1));
  const r2 = await run(agent);
  const out = summary(agent, r2);
  out.reused = agent.messages.slice(1).filter((m) => first.includes(m.id)).length;
  console.log(JSON.stringify(out));
} else {
  console.error(`agui-client: unknown scenario '${scenario}'`);
  process.exit(2);
}
