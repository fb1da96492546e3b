#!/bin/sh
# seeds.sh - a seed corpus per fuzz target, from tests/fixtures/
#
# usage: seeds.sh SRCDIR OUTDIR
#
# Makes OUTDIR/<target>/ for each target of tests/fuzz/ (README.md),
# copied or derived with jq(1) from the fixtures, so no corpus is kept
# in the tree.  Each harness's input format is in its own comment: some
# take a leading byte (a chunk size, flags) before the bytes proper.
set -eu
src=$1/tests/fixtures
out=$2
rm -rf "$out"
for t in ndjson sse openai anthropic schema reconcile mcp mdterm; do
	mkdir -p "$out/$t"
done

# Byte $1 (octal), then file $2's contents, into $3.
prefixed() {
	{ printf "\\$1"; cat "$2"; } >"$3"
}

# The NDJSON reader: every .ndjson fixture, flags 0 and 3, whole and by 7.
n=0
for f in "$src"/ndjson-bad-input/*.ndjson "$src"/decide/*.ndjson \
    "$src"/openai/*.ndjson "$src"/byref/*.ndjson; do
	n=$((n + 1))
	prefixed 000 "$f" "$out/ndjson/$n-a"
	{ printf '\003\007'; cat "$f"; } >"$out/ndjson/$n-b"
	{ printf '\001\000'; cat "$f"; } >"$out/ndjson/$n-c"
done

# SSE: every event stream, compared whole against chunks of 1 and 5.
n=0
for f in "$src"/sse/*.sse "$src"/workers/*.sse; do
	n=$((n + 1))
	prefixed 001 "$f" "$out/sse/$n-1"
	prefixed 005 "$f" "$out/sse/$n-5"
done

# Stream assembly: each provider's own streams (and the shared ones).
for f in "$src"/sse/chat-*.sse "$src"/sse/openai-*.sse \
    "$src"/workers/*.sse "$src"/sse/multi*.sse "$src"/sse/data-*.sse; do
	cp "$f" "$out/openai/"
done
for f in "$src"/sse/messages-*.sse "$src"/sse/unterminated-*.sse \
    "$src"/sse/event-without-data.sse "$src"/sse/crlf-*.sse; do
	cp "$f" "$out/anthropic/"
done

# Schemas: each agent's tool input schema, NUL, each argument object the
# agent's mock script calls it with (and the schema against itself).
n=0
for f in "$src"/agents/*.json; do
	jq -c '(.mock.script // []) as $s | .tools[]? | select(.input) |
	    .name as $n | .input as $i |
	    ([$s[]?.tool_calls[]? | select(.name == $n) | .arguments] +
	     [{}]) | .[] | [$i, .]' "$f" 2>/dev/null |
	while read -r pair; do
		n=$((n + 1))
		printf '%s' "$pair" | jq -c '.[0]' | tr -d '\n' \
		    >"$out/schema/$(basename "$f" .json)-$n"
		printf '\000' >>"$out/schema/$(basename "$f" .json)-$n"
		printf '%s' "$pair" | jq -c '.[1]' \
		    >>"$out/schema/$(basename "$f" .json)-$n"
	done
done
# The tools the OpenAI fixtures declare, each validated against itself.
cat "$src"/openai/*.ndjson "$src"/openai/*.json 2>/dev/null |
    jq -c '.. | objects | .parameters? // empty' 2>/dev/null | sort -u |
    split -l 1 - "$out/schema/params-"

# Views: every messages array a fixture holds, and the same with the ids
# of the harness's store (u1 a1 u2 t0) put on its first messages.
cat "$src"/decide/*.ndjson "$src"/byref/*.ndjson "$src"/openai/*.ndjson |
    jq -c '.. | objects | .messages? | arrays | select(length > 0)' \
    2>/dev/null | sort -u | split -l 1 - "$out/reconcile/view-"
for f in "$out"/reconcile/view-*; do
	jq -c '[foreach .[] as $m (-1; . + 1;
	    $m + (if . < 4 then {id: ["u1","a1","u2","t0"][.]} else {} end))]' \
	    "$f" >"$f-ids"
done
printf '%s' '[{"id":"u1","role":"user","content":"to Paris"},{"id":"a1","role":"assistant","content":"booked"},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"user","content":"more"}]' \
    >"$out/reconcile/tool-echo"

# MCP: a server's answers for each agent's tools: initialize, the tool
# list (as id 5), a result, a tool error and an RPC error for the three
# calls, a ping and a notification; whole and in chunks of 9.
n=0
for f in "$src"/agents/*.json; do
	jq -e '.tools | length > 0' "$f" >/dev/null 2>&1 || continue
	n=$((n + 1))
	jq -c '
	    {jsonrpc: "2.0", id: 1, result: {protocolVersion: "2025-06-18",
	     capabilities: {tools: {}}, serverInfo: {name: "fx"}}},
	    {jsonrpc: "2.0", id: "s1", method: "ping"},
	    {jsonrpc: "2.0", id: 5, result: {tools: [.tools[] |
	     if type == "object" then {name, description,
	     inputSchema: (.input // {type: "object"})} else {name: .,
	     inputSchema: {type: "object"}} end]}},
	    {jsonrpc: "2.0", method: "notifications/message",
	     params: {level: "info", data: "hi"}},
	    {jsonrpc: "2.0", id: 2, result: {content: [{type: "text",
	     text: "42"}, {type: "image", mimeType: "image/png",
	     data: "aGVsbG8="}, {type: "resource", resource: {uri: "x:/y",
	     blob: "AAAA"}}]}},
	    {jsonrpc: "2.0", id: 3, result: {isError: true, content: [],
	     structuredContent: {why: .model}}},
	    {jsonrpc: "2.0", id: 4, error: {code: -32602, message: "bad"}}
	    ' "$f" >"$out/mcp/$n.ndjson"
	prefixed 000 "$out/mcp/$n.ndjson" "$out/mcp/$n-a"
	prefixed 011 "$out/mcp/$n.ndjson" "$out/mcp/$n-b"
	rm "$out/mcp/$n.ndjson"
done

# Markdown: the project's own README files, a width byte before each
# 2 KB piece of them (a model's reply is as long).
n=0
for f in "$1/README.md" "$1/examples/README.md" "$1/tests/crash/README.md" \
    "$1/tests/fuzz/README.md"; do
	[ -f "$f" ] || continue
	split -b 2048 "$f" "$out/mdterm/piece-$n-"
	for p in "$out/mdterm/piece-$n-"*; do
		prefixed 120 "$p" "$p.md"
		rm "$p"
	done
	n=$((n + 1))
done

for t in ndjson sse openai anthropic schema reconcile mcp mdterm; do
	[ -n "$(ls "$out/$t")" ] || { echo "seeds.sh: no seeds for $t" >&2;
	    exit 1; }
done
