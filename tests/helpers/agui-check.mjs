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
// wrote the oracle.  The schemas are loose (zod's looseObject): a key
// they do not declare passes, so a misspelt optional field ("timeStamp",
// "pendingToolCallIDs") would go unseen.  A key the schema does not
// declare is therefore an error here too.  Exits 1 naming the first line
// that fails, else prints "N events" and exits 0.  $AGUI_DIR holds
// node_modules (make agui-core).
import { createRequire } from "node:module";
import path from "node:path";
import fs from "node:fs";

const require = createRequire(path.join(process.env.AGUI_DIR, "node_modules", "x.js"));
const { EventSchemas } = require("@ag-ui/core/schemas");
const { verifyEvents } = require("@ag-ui/client");
const { from, lastValueFrom, toArray } = require("rxjs");

// The path of the first key in v that schema does not declare, or null.
// Walks zod 4's schema objects (_zod.def): a union is judged by the
// options that accept v, a field the schema takes as any JSON not at all.
function unknownKey(schema, v, at) {
  const d = schema._zod.def;

  switch (d.type) {
  case "optional":
  case "nullable":
  case "default":
    return v === undefined || v === null ? null :
        unknownKey(d.innerType, v, at);
  case "pipe":
    return unknownKey(d.in, v, at);
  case "lazy":
    return unknownKey(d.getter(), v, at);
  case "array":
    if (!Array.isArray(v)) return null;
    for (const [i, x] of v.entries()) {
      const u = unknownKey(d.element, x, `${at}[${i}]`);
      if (u !== null) return u;
    }
    return null;
  case "union": {
    let first = null;
    for (const o of d.options) {
      if (!o.safeParse(v).success) continue;
      const u = unknownKey(o, v, at);
      if (u === null) return null;
      first ??= u;
    }
    return first;
  }
  case "object":
    if (v === null || typeof v !== "object" || Array.isArray(v)) return null;
    for (const k of Object.keys(v)) {
      if (!(k in d.shape)) return `${at}.${k}`;
      const u = unknownKey(d.shape[k], v[k], `${at}.${k}`);
      if (u !== null) return u;
    }
    return null;
  default:
    return null;
  }
}

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
  const u = unknownKey(EventSchemas, v, "");
  if (u !== null) {
    console.error(`line ${i + 1}: ${v.type} has no field ${u.slice(1)}: ${l}`);
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
