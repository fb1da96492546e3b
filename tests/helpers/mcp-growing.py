#!/usr/bin/env python3
# mcp-growing.py - a tiny MCP server (stdio, newline-delimited JSON-RPC)
# whose tool list grows: it serves "alpha" and "grow"; a call to "grow"
# adds "beta", sends notifications/tools/list_changed, answers the
# tools/list that follows, and only then answers the call, so a client
# has the new list before the call's result.  "beta" and "alpha" echo
# their "text" argument.  Written for tests/cli/mcp-servers.bats.
import json
import sys
import time

tools = [
    {"name": "alpha", "description": "echoes text",
     "inputSchema": {"type": "object",
                     "properties": {"text": {"type": "string"}}}},
    {"name": "grow", "description": "adds the tool beta",
     "inputSchema": {"type": "object"}},
]
beta = {"name": "beta", "description": "echoes text, once grown",
        "inputSchema": {"type": "object",
                        "properties": {"text": {"type": "string"}}},
        "annotations": {"readOnlyHint": True}}


def say(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(i, r):
    say({"jsonrpc": "2.0", "id": i, "result": r})


def text(s):
    return {"content": [{"type": "text", "text": s}]}


pending = None  # the grow call, answered after the next tools/list
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, i = msg.get("method"), msg.get("id")
    if method == "initialize":
        result(i, {"protocolVersion": "2025-06-18",
                   "capabilities": {"tools": {"listChanged": True}},
                   "serverInfo": {"name": "growing", "version": "1"}})
    elif method == "tools/list":
        result(i, {"tools": tools})
        if pending is not None:
            time.sleep(0.3)
            result(pending, text("grown"))
            pending = None
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if name == "grow":
            if beta not in tools:
                tools.append(beta)
            pending = i
            say({"jsonrpc": "2.0",
                 "method": "notifications/tools/list_changed"})
        elif name in ("alpha", "beta") and any(t["name"] == name
                                               for t in tools):
            result(i, text(name + ": " + str(args.get("text", ""))))
        else:
            say({"jsonrpc": "2.0", "id": i,
                 "error": {"code": -32602, "message": "no tool " + name}})
    elif i is not None:
        say({"jsonrpc": "2.0", "id": i, "result": {}})
