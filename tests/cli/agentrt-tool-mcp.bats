#!/usr/bin/env bats
# agentrt-tool --mcp: the tools of a real MCP server
# (@modelcontextprotocol/server-everything, from the npm registry) served
# over its stdio, in a stage and in a whole ring.  Without node or the
# installed server the tests are skipped, saying why.

load lib

setup_file() {
	mcp_server_setup
}

setup() {
	[ -z "$MCP_SKIP" ] || skip "$MCP_SKIP"
	server="node $MCP_JS stdio"
}

# exec ID NAME ARGS: a tool.execute decision for session s1.
exec_line() {
	jq -nc --arg id "$1" --arg n "$2" --arg a "$3" \
	    '{type: "decision.request", session_id: "s1", decision_id: ("d-" + $id),
	      trigger: {type: "tool.execute", id: $id, attempt: 1, name: $n,
	      arguments: $a}}'
}

tool() {
	rc=0
	agentrt-tool -t "$BATS_TEST_TMPDIR" "$@" <"$BATS_TEST_TMPDIR/in" \
	    >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	err=$BATS_TEST_TMPDIR/err
}

# mcp_ring AGENT MESSAGE: one turn of the fixture agent AGENT through the
# whole ring, the server as --mcp "ev=…"; $status, $output, events in
# $BATS_TEST_TMPDIR/events.
mcp_ring() {
	local fifo=$BATS_TEST_TMPDIR/ring
	mkfifo "$fifo"
	run timeout 60 bash -c '
		agentrt-decide <"$1" |
		agentrt-llm |
		agentrt-tool -t "$2" --mcp "ev=$3" |
		AGENTRT_AGENTS="$4" agentrt-session run -a "$6" -m "$7" \
		    --events "$5" >"$1"' ring "$fifo" "$BATS_TEST_TMPDIR" \
	    "$server" "$top_srcdir/tests/fixtures/agents" \
	    "$BATS_TEST_TMPDIR/events" "$1" "$2"
}

# settle ID: the settle line of call ID, compact.
settle() {
	jq -c --arg id "$1" 'select((.type == "tool.result" or
	    .type == "tool.error") and .id == $id)' "$out"
}

@test "an MCP server's tools are served: answered at once, settled with the content" {
	{ exec_line c1 echo '{"message":"hi"}'
	  exec_line c2 get-sum '{"a":2,"b":3}'; } >"$BATS_TEST_TMPDIR/in"
	tool --mcp "$server"
	[ "$rc" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(jq -c 'select(.type == "decision.response") | .actions' "$out" | tr -d '\n')" '[][]'
	assert_eq "$(settle c1)" '{"type":"tool.result","session_id":"s1","id":"c1","attempt":1,"result":"Echo: hi","structured_content":null}'
	assert_eq "$(settle c2 | jq -r .result)" 'The sum of 2 and 3 is 5.'
}

@test "NAME= prefixes the tools; other names pass on unchanged" {
	{ exec_line c1 ev__echo '{"message":"x"}'
	  exec_line c2 echo '{"message":"y"}'; } >"$BATS_TEST_TMPDIR/in"
	tool --mcp "ev=$server"
	assert_eq "$(settle c1 | jq -r .result)" 'Echo: x'
	# Without its prefix the name is not this stage's: passed on as it came.
	assert_eq "$(sed -n 2p "$out")" "$(sed -n 2p "$BATS_TEST_TMPDIR/in")"
}

@test "an MCP tool error and a JSON-RPC failure become tool.error, not retried" {
	{ exec_line c1 get-sum '{"a":"x"}'
	  exec_line c2 echo '[1]'; } >"$BATS_TEST_TMPDIR/in"
	tool --mcp "$server"
	assert_eq "$(settle c1 | jq -c '[.type, .retryable]')" '["tool.error",false]'
	[[ "$(settle c1 | jq -r .error)" == "MCP error -32602: Input validation error: "* ]]
	assert_eq "$(jq -c 'select(.decision_id == "d-c2") | .actions' "$out")" \
	    '[{"type":"tool.error","error":"arguments are not a JSON object","retryable":false}]'
}

@test "the server gets a tool's scrubbed environment: no provider key" {
	exec_line c1 get-env '{}' >"$BATS_TEST_TMPDIR/in"
	OPENAI_API_KEY=sk-mcp-secret ANTHROPIC_API_KEY=sk-ant-mcp-secret tool --mcp "$server"
	env=$(settle c1 | jq -r .result)
	[[ "$env" == *'"PATH"'* ]]
	[[ "$env" != *sk-mcp-secret* && "$env" != *OPENAI_API_KEY* ]]
	[[ "$env" != *ANTHROPIC_API_KEY* ]]
}

@test "--list adds the server's tools as an agent file declares them" {
	run agentrt-tool -t "$BATS_TEST_TMPDIR" --mcp "ev=$server" --list
	[ "$status" -eq 0 ]
	assert_eq "$(printf '%s\n' "$output" | jq -c 'select(.name == "ev__get-sum") |
	    [.input.type, .input.required, (.description | length > 0)]')" \
	    '["object",["a","b"],true]'
}

@test "a server that cannot start, and a bad --mcp, are clear errors" {
	: >"$BATS_TEST_TMPDIR/in"
	tool --mcp "no-such-mcp-server --stdio"
	[ "$rc" -eq 1 ]
	assert_eq "$(cat "$err")" "agentrt-tool: --mcp 'no-such-mcp-server --stdio': run 'no-such-mcp-server': not found in PATH"
	tool --mcp "ev='unclosed"
	[ "$rc" -eq 2 ]
	[[ "$(head -1 "$err")" == "agentrt-tool: --mcp 'ev='unclosed': unclosed '" ]]
	tool --mcp "b@d=x"
	[ "$rc" -eq 2 ]
	[[ "$(head -1 "$err")" == *"the name before '=' may hold letters"* ]]
	tool --mcp "  "
	[ "$rc" -eq 2 ]
	[[ "$(head -1 "$err")" == *"no command to run"* ]]
}

@test "a ring whose agent calls an MCP tool" {
	mcp_ring mcp-sum add
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c 'select(.type == "completion") | .text' "$BATS_TEST_TMPDIR/events")" \
	    '"the server said: The sum of 17 and 25 is 42."'
}

@test "an MCP image result settles as ContentPart[]: text parts and a data URL" {
	exec_line c1 get-tiny-image '{}' >"$BATS_TEST_TMPDIR/in"
	tool --mcp "$server"
	[ "$rc" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(settle c1 | jq -c '[.result[].type]')" '["text","image_url","text"]'
	[[ "$(settle c1 | jq -r '.result[1].image_url.url')" == "data:image/png;base64,iVBOR"* ]]
	# An image over --max-output is a note, as output over it is cut.
	tool --mcp "$server" --max-output 200
	assert_eq "$(settle c1 | jq -c '[.result[].type]')" '["text","text","text"]'
	[[ "$(settle c1 | jq -r '.result[1].text')" == "[image image/png, "*" bytes cut by --max-output 200]" ]]
}

@test "a plain MCP result stays a plain string" {
	exec_line c1 echo '{"message":"plain"}' >"$BATS_TEST_TMPDIR/in"
	tool --mcp "$server"
	assert_eq "$(settle c1 | jq -c .result)" '"Echo: plain"'
}

@test "notifications/progress become tool.progress lines before the settle" {
	exec_line c1 trigger-long-running-operation '{"duration":0.3,"steps":3}' \
	    >"$BATS_TEST_TMPDIR/in"
	tool --mcp "$server"
	[ "$rc" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(jq -c 'select(.type == "tool.progress") | [.session_id, .id, .progress, .total]' "$out" | tr -d '\n')" \
	    '["s1","c1",1,3]["s1","c1",2,3]["s1","c1",3,3]'
	assert_eq "$(jq -r '.type' "$out" | tail -1)" 'tool.result'
}

# A server written here that answers every request in a JSON-RPC batch.
batch_server() {
	cat >"$BATS_TEST_TMPDIR/batch.py" <<'PY'
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
             "serverInfo": {"name": "batch", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": [{"name": "hi", "inputSchema": {"type": "object"}}]}
    else:
        tok = m["params"]["_meta"]["progressToken"]
        r = {"content": [{"type": "text", "text": "batched hi"}]}
        print(json.dumps([{"jsonrpc": "2.0", "method": "notifications/progress",
                           "params": {"progressToken": tok, "progress": 1,
                                      "message": "half"}},
                          {"jsonrpc": "2.0", "id": m["id"], "result": r}]),
              flush=True)
        continue
    print(json.dumps([{"jsonrpc": "2.0", "id": m["id"], "result": r}]),
          flush=True)
PY
}

@test "a JSON-RPC batch reply is answered, not left to time out" {
	command -v python3 >/dev/null || skip "no python3"
	batch_server
	exec_line c1 hi '{}' >"$BATS_TEST_TMPDIR/in"
	# Left unanswered, the call would settle as a timeout error.
	tool --mcp "python3 $BATS_TEST_TMPDIR/batch.py" --timeout 20
	[ "$rc" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(settle c1 | jq -c .result)" '"batched hi"'
	assert_eq "$(jq -c 'select(.type == "tool.progress") | [.progress, .message]' "$out")" '[1,"half"]'
}

@test "a ring: the image reaches the model as parts, progress reaches --events" {
	mcp_ring mcp-image look
	[ "$status" -eq 0 ] || fail "$output"
	ev=$BATS_TEST_TMPDIR/events
	assert_eq "$(jq -c 'select(.type == "tool.progress") | [.progress, .total]' "$ev" | tr -d '\n')" '[1,2][2,2]'
	sid=$(jq -r 'select(.type == "tool.progress") | .session_id' "$ev" | head -1)
	agentrt-session log "$sid" >"$BATS_TEST_TMPDIR/log"
	# The second model call saw the image's parts in the tool message.
	assert_eq "$(jq -c 'select(.payload.type == "llm.call.requested") |
	    [.payload.request.messages[] | select(.role == "tool") |
	     if (.content | type) == "array" then [.content[].type] else "text" end]' \
	    "$BATS_TEST_TMPDIR/log" | sed -n 2p)" '[["text","image_url","text"]]'
	# Progress is news, not history: the log keeps none of it.
	assert_eq "$(grep -c 'tool.progress' "$BATS_TEST_TMPDIR/log")" 0
}
