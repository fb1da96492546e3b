// agui-check.mjs - are these lines AG-UI events, in an order AG-UI allows?
//
// Usage: node agui-check.mjs <EVENTS.ndjson
//
// Each line is parsed by @ag-ui/core's EventSchemas (the protocol's zod
// schemas), then the whole sequence goes through @ag-ui/client's
// verifyEvents, the check its own HttpAgent puts every stream through
// (runs started before their events, messages and tool calls started
// before their content and ended once, steps finished, nothing after the
// run's end but a new run).  Both are the packages' own code: nobody here
// wrote the oracle.  Exits 1 naming the first line that fails, else prints
// "N events" and exits 0.  $AGUI_DIR holds node_modules (make agui-core).
import { createRequire } from "node:module";
import path from "node:path";
import fs from "node:fs";

const require = createRequire(path.join(process.env.AGUI_DIR, "node_modules", "x.js"));
const { EventSchemas } = require("@ag-ui/core/schemas");
const { verifyEvents } = require("@ag-ui/client");
const { from, lastValueFrom, toArray } = require("rxjs");

const lines = fs.readFileSync(0, "utf8").split("\n").filter((l) => l !== "");
const events = [];
for (const [i, l] of lines.entries()) {
  let v;
  try {
    v = JSON.parse(l);
  } catch (e) {
    console.error(`line ${i + 1}: not JSON: ${e.message}`);
    process.exit(1);
  }
  const r = EventSchemas.safeParse(v);
  if (!r.success) {
    console.error(`line ${i + 1}: not an AG-UI event: ${l}\n${r.error.message}`);
    process.exit(1);
  }
  events.push(r.data);
}
try {
  await lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
} catch (e) {
  console.error(`out of AG-UI's order: ${e.message}`);
  process.exit(1);
}
console.log(`${events.length} events`);
