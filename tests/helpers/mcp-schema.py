#!/usr/bin/env python3
# mcp-schema.py - a tiny MCP server (stdio, newline-delimited JSON-RPC)
# whose tools all declare an outputSchema, {"n": integer}, and answer
# with text content, as MCP servers do, and:
#   good  structuredContent {"n": 1}, which matches
#   bad   structuredContent {"n": "one"}, which does not
#   none  no structuredContent at all
# Written for tests/cli/mcp-servers.bats.
import json
import sys

schema = {"type": "object", "properties": {"n": {"type": "integer"}},
          "required": ["n"]}
tools = [{"name": name, "description": name + " structured content",
          "inputSchema": {"type": "object"}, "outputSchema": schema}
         for name in ("good", "bad", "none")]
answers = {"good": {"n": 1}, "bad": {"n": "one"}, "none": None}


def say(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, i = msg.get("method"), msg.get("id")
    if method == "initialize":
        say({"jsonrpc": "2.0", "id": i, "result": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "schema", "version": "1"}}})
    elif method == "tools/list":
        say({"jsonrpc": "2.0", "id": i, "result": {"tools": tools}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        r = {"content": [{"type": "text", "text": name + " said n"}]}
        if answers.get(name) is not None:
            r["structuredContent"] = answers[name]
        say({"jsonrpc": "2.0", "id": i, "result": r})
    elif i is not None:
        say({"jsonrpc": "2.0", "id": i, "result": {}})
