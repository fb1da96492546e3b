#!/usr/bin/env bats
# An agent's "mcp_servers": the tools its MCP servers declare become its
# tools.  Real servers: @modelcontextprotocol/server-everything (make
# mcp-server; its tests are skipped, saying why, without it or node) and
# tests/helpers/mcp-growing.py (python3), whose list grows on demand.

load lib

setup_file() {
	mcp_server_setup
}

setup() {
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/agents" "$T/tools"
	server="node $MCP_JS stdio"
}

needs_everything() {
	[ -z "$MCP_SKIP" ] || skip "$MCP_SKIP"
}

needs_python() {
	command -v python3 >/dev/null || skip "no python3"
	grower="python3 $top_srcdir/tests/helpers/mcp-growing.py"
}

# agent NAME JQ-ARGS... PROGRAM: writes agents/NAME.json from a jq program.
agent() {
	local name=$1
	shift
	jq -n "$@" >"$T/agents/$name.json"
}

# ring AGENT MESSAGE: one turn through the whole ring; $status, $output.
ring() {
	rm -f "$T/ring"
	mkfifo "$T/ring"
	run timeout 90 bash -c '
		agentrt-decide <"$1/ring" |
		agentrt-llm |
		agentrt-tool -t "$1/tools" $TOOL_OPTS 2>>"$1/tool.err" |
		AGENTRT_AGENTS="$1/agents" agentrt-session run -a "$2" -m "$3" \
		    --events "$1/events" >"$1/ring"' ring "$T" "$1" "$2"
}

# The error the turn ended with, as clients see it.
turn_error() {
	jq -r 'select(.type == "completion") | .error' "$T/events"
}

sid() {
	agentrt-session ls | jq -r .id | head -1
}

# The recorded events of type T of the session, payloads, compact.
logged() {
	agentrt-session log "$(sid)" | jq -c --arg t "$1" \
	    '.payload | select(.type == $t)'
}

@test "agentrt-tool answers tools.list: the server's tools as declarations, narrowed by globs" {
	needs_everything
	jq -nc --arg c "$server" '{type: "tools.list", session_id: "s1",
	    id: "l1", server: "ev", command: $c, tools: ["get-s*", "echo"]}' \
	    >"$T/in"
	echo '{"type":"other","x":1}' >>"$T/in"
	timeout 60 agentrt-tool -t "$T/tools" <"$T/in" >"$T/out" 2>"$T/err" ||
	    fail "$(cat "$T/err")"
	assert_eq "$(jq -c 'select(.type == "tools.listed") |
	    [.session_id, .id, .server, [.tools[].name]]' "$T/out")" \
	    '["s1","l1","ev",["echo","get-structured-content","get-sum"]]'
	# inputSchema is input; the server's annotations and name go along.
	assert_eq "$(jq -c 'select(.type == "tools.listed") | .tools[] |
	    select(.name == "echo") | [.input.required, .annotations.readOnlyHint,
	    .mcp_server, has("inputSchema")]' "$T/out")" '[["message"],true,"ev",false]'
	assert_eq "$(jq -c 'select(.type == "tools.listed") | .tools[] |
	    select(.name == "get-structured-content") | .output.type' "$T/out")" '"object"'
	# What it does not own passes on.
	assert_eq "$(jq -c 'select(.type == "other")' "$T/out")" '{"type":"other","x":1}'
}

@test "tools.list of a server that cannot run is answered with an error naming it" {
	jq -nc '{type: "tools.list", session_id: "s1", id: "l1", server: "fs",
	    command: "no-such-mcp-server-xyz --stdio"}' >"$T/in"
	timeout 30 agentrt-tool -t "$T/tools" <"$T/in" >"$T/out" 2>"$T/err"
	assert_eq "$(jq -c 'select(.type == "tools.listed") | [.id, .server,
	    .error, has("tools")]' "$T/out")" \
	    "[\"l1\",\"fs\",\"run 'no-such-mcp-server-xyz': not found in PATH\",false]"
	grep -q "mcp server 'fs'" "$T/err"
}

@test "a ring: the agent calls a server's tool its file never declares; the store keeps the list" {
	needs_everything
	agent evsum --arg c "$server" '{model: "mock/script",
	    mcp_servers: {ev: {command: $c, tools: ["get-sum", "echo"]}},
	    mock: {script: [{tool_calls: [{name: "get-sum", arguments: {a: 17, b: 25}}]},
	      {content: "the server said: {{tool}}"}]}}'
	ring evsum add
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c 'select(.type == "completion") | .text' "$T/events")" \
	    '"the server said: The sum of 17 and 25 is 42."'
	# Asked for before session.start went out, answered, recorded.
	assert_eq "$(logged tools.requested | jq -c .servers)" '["ev"]'
	assert_eq "$(logged tools.listed | jq -c '[.server, [.tools[].name]]')" \
	    '["ev",["echo","get-sum"]]'
	# The session's config holds them; the model was offered them.
	assert_eq "$(agentrt-session show "$(sid)" | jq -c '[.config.tools[] |
	    [.name, .mcp_server]]')" '[["echo","ev"],["get-sum","ev"]]'
	assert_eq "$(logged llm.call.requested | head -1 | jq -c \
	    '[.request.tools[] | (.name // .function.name)]')" '["echo","get-sum"]'
}

@test "globs narrow: a tool they do not pass is not declared, and a call to it is refused" {
	needs_everything
	agent narrow --arg c "$server" '{model: "mock/script",
	    mcp_servers: {ev: {command: $c, tools: ["get-sum"]}},
	    mock: {script: [{tool_calls: [{name: "echo", arguments: {message: "hi"}}]},
	      {content: "got: {{tool}}"}]}}'
	ring narrow go
	assert_eq "$(logged tools.listed | jq -c '[.tools[].name]')" '["get-sum"]'
	assert_eq "$(logged llm.call.requested | head -1 | jq -c \
	    '[.request.tools[] | (.name // .function.name)]')" '["get-sum"]'
	# The call never reached the server.
	logged tool.call.errored | grep -q 'unknown tool' ||
	    fail "$(agentrt-session log "$(sid)" | jq -c .payload)"
	[ -z "$(logged tool.call.completed)" ]
	# agentrt-tool alone refuses it too, whatever the line says.
	jq -nc --arg c "$server" '{type: "decision.request", session_id: "s1",
	    decision_id: "d1", agent: {model: "m", mcp_servers: {ev: {command: $c,
	    tools: ["get-sum"]}}, tools: [{name: "echo", mcp_server: "ev"}]},
	    trigger: {type: "tool.execute", id: "c1", attempt: 1, name: "echo",
	    arguments: "{\"message\":\"hi\"}"}}' >"$T/in"
	timeout 60 agentrt-tool -t "$T/tools" <"$T/in" >"$T/out" 2>"$T/err"
	assert_eq "$(jq -c '.actions[0] | [.type, .code]' "$T/out")" '["tool.error","unknown_tool"]'
}

@test "env passes the variables it names to the server, and only those" {
	needs_everything
	jq -nc --arg c "$server" '{type: "decision.request", session_id: "s1",
	    decision_id: "d1", agent: {model: "m", mcp_servers: {ev: {command: $c,
	    env: ["MCP_SEEN"]}}, tools: [{name: "get-env", mcp_server: "ev"}]},
	    trigger: {type: "tool.execute", id: "c1", attempt: 1, name: "get-env",
	    arguments: "{}"}}' >"$T/in"
	MCP_SEEN=visible-value MCP_UNSEEN=hidden-value \
	    OPENAI_API_KEY=sk-proj-SENTINELsecret0000000000000000 \
	    timeout 60 agentrt-tool -t "$T/tools" <"$T/in" >"$T/out" 2>"$T/err" ||
	    fail "$(cat "$T/err")"
	result=$(jq -r 'select(.type == "tool.result") | .result' "$T/out")
	[[ "$result" == *visible-value* ]] || fail "not passed: $result"
	[[ "$result" != *hidden-value* ]] || fail "passed: $result"
	[[ "$result" != *SENTINEL* ]] || fail "a key got through: $result"
}

@test "list_changed: the tool stage sends a fresh tools.listed unasked" {
	needs_python
	jq -nc --arg c "$grower" '{type: "tools.list", session_id: "s1",
	    id: "l1", server: "g", command: $c}' >"$T/in1"
	jq -nc --arg c "$grower" '{type: "decision.request", session_id: "s1",
	    decision_id: "d1", agent: {model: "m", mcp_servers: {g: {command: $c}},
	    tools: [{name: "grow", mcp_server: "g"}]},
	    trigger: {type: "tool.execute", id: "c1", attempt: 1, name: "grow",
	    arguments: "{}"}}' >"$T/in2"
	# The call goes in once the list is answered: a call that grew the
	# list first would make the answer the grown list, and rightly so.
	{ cat "$T/in1"
	  for (( i = 0; i < 200; i++ )); do
		grep -q tools.listed "$T/out" 2>/dev/null && break
		sleep 0.05
	  done
	  cat "$T/in2"; sleep 2; } | timeout 30 agentrt-tool -t "$T/tools" \
	    >"$T/out" 2>"$T/err" || fail "$(cat "$T/err")"
	assert_eq "$(jq -c 'select(.type == "tools.listed") | [.id, [.tools[].name]]' "$T/out")" \
	    "$(printf '%s\n' '["l1",["alpha","grow"]]' '[null,["alpha","grow","beta"]]')"
	assert_eq "$(jq -c 'select(.type == "tool.result") | .result' "$T/out")" '"grown"'
}

@test "list_changed in a ring: the new list is recorded and the model may call the new tool" {
	needs_python
	agent grows --arg c "$grower" '{model: "mock/script",
	    mcp_servers: {g: {command: $c}},
	    mock: {script: [{tool_calls: [{name: "grow", arguments: {}}]},
	      {tool_calls: [{name: "beta", arguments: {text: "hi"}}]},
	      {content: "last: {{tool}}"}]}}'
	ring grows go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c 'select(.type == "completion") | .text' "$T/events")" '"last: beta: hi"'
	assert_eq "$(logged tools.listed | jq -c '[.id != null, [.tools[].name]]')" \
	    "$(printf '%s\n' '[true,["alpha","grow"]]' '[false,["alpha","grow","beta"]]')"
	assert_eq "$(logged agent.updated | tail -1 | jq -c '[.config.tools[].name]')" \
	    '["alpha","grow","beta"]'
}

@test "replay sees the recorded list and starts no server" {
	needs_everything
	# The server is run through a script the test removes before replay.
	printf '#!/bin/sh\nexec %s\n' "$server" >"$T/ev-server"
	chmod +x "$T/ev-server"
	agent evsum --arg c "$T/ev-server" '{model: "mock/script",
	    mcp_servers: {ev: {command: $c, tools: ["get-sum"]}},
	    mock: {script: [{tool_calls: [{name: "get-sum", arguments: {a: 1, b: 2}}]},
	      {content: "said: {{tool}}"}]}}'
	ring evsum add
	[ "$status" -eq 0 ] || fail "$output"
	agentrt-session export "$(sid)" >"$T/rec.ndjson"
	rm "$T/ev-server"
	run timeout 60 agentrt-session replay "$T/rec.ndjson"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -r .type <<<"$output")" replay.passed
	new=$(jq -r .session <<<"$output")
	assert_eq "$(agentrt-session log "$new" | jq -c '.payload |
	    select(.type == "tools.listed") | [.server, [.tools[].name]]')" '["ev",["get-sum"]]'
}

@test "a server that cannot start fails the turn, naming it" {
	agent broken '{model: "mock/script",
	    mcp_servers: {fs: {command: "no-such-mcp-server-xyz"}},
	    mock: {script: [{content: "never"}]}}'
	ring broken hi
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(turn_error)" "mcp server 'fs': run 'no-such-mcp-server-xyz': not found in PATH"
	[ -z "$(logged llm.call.requested)" ]
}

@test "without agentrt-tool in the ring, the turn fails saying so" {
	agent alone '{model: "mock/script",
	    mcp_servers: {fs: {command: "whatever"}},
	    mock: {script: [{content: "never"}]}}'
	rm -f "$T/ring"
	mkfifo "$T/ring"
	run timeout 30 bash -c 'agentrt-decide <"$1/ring" | agentrt-llm |
		AGENTRT_AGENTS="$1/agents" agentrt-session run -a alone -m hi \
		    --events "$1/events" >"$1/ring"' ring "$T"
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(turn_error)" "mcp server 'fs': no stage answered tools.list (is agentrt-tool in the ring?)"
}

@test "a tool name a server shares with the agent's own tools fails the turn, naming both" {
	needs_python
	agent clash --arg c "$grower" '{model: "mock/script",
	    tools: [{name: "alpha", input: {type: "object"}}],
	    mcp_servers: {g: {command: $c}},
	    mock: {script: [{content: "never"}]}}'
	ring clash hi
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(turn_error)" "tool 'alpha' of mcp server 'g' clashes with the agent's own tool 'alpha'"
}

@test "a bad mcp_servers fails at agent load, naming the member" {
	agent b1 '{model: "mock/script", mcp_servers: ["fs"]}'
	agent b2 '{model: "mock/script", mcp_servers: {fs: {tools: ["x"]}}}'
	agent b3 '{model: "mock/script", mcp_servers: {fs: {command: "x", tools: "read_*"}}}'
	for a in b1 b2 b3; do
		run agentrt-session run --agents "$T/agents" -a $a -m hi </dev/null
		[ "$status" -eq 1 ] || fail "$a: status $status: $output"
		case $a in
		b1) [[ "$output" == *"field 'mcp_servers': expected an object"* ]] ;;
		b2) [[ "$output" == *"mcp_servers.fs.command: expected a non-empty string"* ]] ;;
		b3) [[ "$output" == *"mcp_servers.fs.tools: expected an array of glob strings"* ]] ;;
		esac || fail "$a: $output"
	done
	assert_eq "$(agentrt-session ls -q)" ""
}

@test "a server still starting holds only its tools.list: other calls go on" {
	needs_python
	echo '"hello"' >"$T/tools/hi.jq"
	{ jq -nc --arg c "sh -c 'sleep 1; exec $grower'" '{type: "tools.list",
	    session_id: "s1", id: "l1", server: "g", command: $c}'
	  jq -nc '{type: "decision.request", session_id: "s1", decision_id: "d1",
	    trigger: {type: "tool.execute", id: "c1", attempt: 1, name: "hi",
	    arguments: "{}"}}'; } >"$T/in"
	timeout 30 agentrt-tool -t "$T/tools" <"$T/in" >"$T/out" 2>"$T/err" ||
	    fail "$(cat "$T/err")"
	assert_eq "$(jq -c '[.type, (.actions[0].result // [.tools[].name])]' "$T/out")" \
	    "$(printf '%s\n' '["decision.response","hello"]' '["tools.listed",["alpha","grow"]]')"
}

@test "a decision cannot name an MCP server: only the agent file may, so no command of a worker's runs" {
	local mark="$T/ran-by-a-decision"
	agent plain '{model: "mock/script",
	    tools: [{name: "sneak", description: "x"}],
	    mock: {script: [{tool_calls: [{name: "sneak", arguments: {}}]},
	      {content: "after: {{tool}}"}]}}'
	# The policy answers session.start with a config naming a server.
	jq -n --arg c "touch $mark" '"if .trigger.type == \"session.start\"
	    then .proposed | .agent.mcp_servers = {x: {command: \($c | tojson)}}
	      | .agent.tools = [{name: \"sneak\", mcp_server: \"x\"}]
	    elif .trigger.type == \"tool.execute\" then empty
	    else .proposed end"' -r >"$T/policy.jq"
	rm -f "$T/ring"
	mkfifo "$T/ring"
	run timeout 90 bash -c '
		agentrt-decide -f "$1/policy.jq" <"$1/ring" | agentrt-llm |
		agentrt-tool -t "$1/tools" |
		AGENTRT_AGENTS="$1/agents" agentrt-session run -a plain -m go \
		    --events "$1/events" >"$1/ring"' ring "$T"
	[ ! -e "$mark" ] || fail "a decision's server command ran"
	assert_eq "$(agentrt-session show "$(sid)" | jq -c '.config.mcp_servers')" null
	[ "$status" -eq 0 ] || fail "$output"
	# The declaration names a server the config has not: refused.
	assert_eq "$(logged tool.call.errored | jq -r .error)" \
	    "unknown tool: sneak (mcp server 'x' does not serve it to this agent)"
}

@test "one server per name, command and env: agents that pass other variables get their own" {
	needs_everything
	local e
	for e in MCP_SEEN MCP_OTHER; do
		jq -nc --arg c "$server" --arg e "$e" '{type: "decision.request",
		    session_id: "s-\($e)", decision_id: "d-\($e)", agent: {model: "m",
		    mcp_servers: {ev: {command: $c, env: [$e]}},
		    tools: [{name: "get-env", mcp_server: "ev"}]},
		    trigger: {type: "tool.execute", id: "c-\($e)", attempt: 1,
		    name: "get-env", arguments: "{}"}}'
	done >"$T/in"
	MCP_SEEN=seen-value MCP_OTHER=other-value \
	    timeout 60 agentrt-tool -t "$T/tools" <"$T/in" >"$T/out" 2>"$T/err" ||
	    fail "$(cat "$T/err")"
	result=$(jq -r 'select(.type == "tool.result" and .id == "c-MCP_OTHER") |
	    .result' "$T/out")
	[[ "$result" == *other-value* ]] || fail "not its own server: $result"
	[[ "$result" != *seen-value* ]] || fail "the first agent's server: $result"
}

@test "an agent's server sends progress as tool.progress lines" {
	needs_everything
	jq -nc --arg c "$server" '{type: "decision.request", session_id: "s1",
	    decision_id: "d1", agent: {model: "m", mcp_servers: {ev: {command: $c}},
	    tools: [{name: "trigger-long-running-operation", mcp_server: "ev"}]},
	    trigger: {type: "tool.execute", id: "c1", attempt: 1,
	    name: "trigger-long-running-operation",
	    arguments: "{\"duration\":0.3,\"steps\":3}"}}' >"$T/in"
	timeout 60 agentrt-tool -t "$T/tools" <"$T/in" >"$T/out" 2>"$T/err" ||
	    fail "$(cat "$T/err")"
	assert_eq "$(jq -c 'select(.type == "tool.progress") | [.id, .progress]' \
	    "$T/out" | head -1)" '["c1",1]'
	assert_eq "$(jq -r 'select(.type == "tool.result") | .id' "$T/out")" c1
}

@test "a server tells at most 256 sessions of a list change: the last to ask" {
	needs_python
	local i
	for (( i = 1; i <= 300; i++ )); do
		printf '{"type":"tools.list","session_id":"s%d","id":"l%d","server":"g","command":"%s"}\n' \
		    "$i" "$i" "$grower"
	done >"$T/in1"
	jq -nc --arg c "$grower" '{type: "decision.request", session_id: "s300",
	    decision_id: "d1", agent: {model: "m", mcp_servers: {g: {command: $c}},
	    tools: [{name: "grow", mcp_server: "g"}]},
	    trigger: {type: "tool.execute", id: "c1", attempt: 1, name: "grow",
	    arguments: "{}"}}' >"$T/in2"
	{ cat "$T/in1"
	  for (( i = 0; i < 200; i++ )); do
		[ "$(grep -c tools.listed "$T/out" 2>/dev/null)" -ge 300 ] && break
		sleep 0.05
	  done
	  cat "$T/in2"; sleep 2; } | timeout 30 agentrt-tool -t "$T/tools" \
	    >"$T/out" 2>"$T/err" || fail "$(cat "$T/err")"
	assert_eq "$(jq -c 'select(.type == "tools.listed" and .id == null) |
	    .session_id' "$T/out" | wc -l)" 256
	assert_eq "$(jq -r 'select(.type == "tools.listed" and .id == null) |
	    .session_id' "$T/out" | head -1)" s45
}

@test "a server's tools are stamped with its name, whoever made the tools.listed line" {
	agent stamp '{model: "mock/script", mcp_servers: {x: {command: "never-run"}},
	    mock: {script: [{content: "ok"}]}}'
	rm -f "$T/ring"
	mkfifo "$T/ring"
	# A tool stage of our own making, whose list names no server.
	run timeout 60 bash -c '
		agentrt-decide <"$1/ring" | agentrt-llm |
		jq -c --unbuffered "if .type == \"tools.list\" then
		    {type: \"tools.listed\", session_id, id, server,
		     tools: [{name: \"t1\", input: {type: \"object\"}}]}
		    else . end" |
		AGENTRT_AGENTS="$1/agents" agentrt-session run -a stamp -m go \
		    --events "$1/events" >"$1/ring"' ring "$T"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session show "$(sid)" | jq -c '[.config.tools[] |
	    [.name, .mcp_server]]')" '[["t1","x"]]'
}

needs_reference() {
	[ -z "$MCP_SKIP" ] || skip "$MCP_SKIP"
	[ -f "${MCP_FS_JS:-}" ] && [ -f "${MCP_MEMORY_JS:-}" ] ||
	    skip "the reference filesystem and memory servers are not installed (make mcp-server)"
}

@test "every tool of the reference filesystem and memory servers answers through a ring, output schemas and all" {
	needs_reference
	mkdir -p "$T/fs"
	# A 1x1 PNG for read_media_file.
	printf 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==' |
	    base64 -d >"$T/fs/dot.png"
	export MEMORY_FILE_PATH=$T/memory.jsonl
	agent ref --arg fs "node $MCP_FS_JS $T/fs" --arg mem "node $MCP_MEMORY_JS" \
	    --arg d "$T/fs" '{model: "mock/script",
	    mcp_servers: {fs: {command: $fs}, memory: {command: $mem, env: ["MEMORY_FILE_PATH"]}},
	    mock: {script: (([
	      ["create_directory", {path: "\($d)/d"}],
	      ["write_file", {path: "\($d)/d/a.txt", content: "hello world"}],
	      ["read_file", {path: "\($d)/d/a.txt"}],
	      ["read_text_file", {path: "\($d)/d/a.txt"}],
	      ["read_media_file", {path: "\($d)/dot.png"}],
	      ["read_multiple_files", {paths: ["\($d)/d/a.txt"]}],
	      ["edit_file", {path: "\($d)/d/a.txt", edits: [{oldText: "world", newText: "there"}]}],
	      ["list_directory", {path: "\($d)/d"}],
	      ["list_directory_with_sizes", {path: "\($d)/d"}],
	      ["directory_tree", {path: $d}],
	      ["move_file", {source: "\($d)/d/a.txt", destination: "\($d)/d/b.txt"}],
	      ["search_files", {path: $d, pattern: "*.txt"}],
	      ["get_file_info", {path: "\($d)/d/b.txt"}],
	      ["list_allowed_directories", {}],
	      ["create_entities", {entities: [{name: "Ada", entityType: "person", observations: ["wrote notes"]},
	        {name: "Engine", entityType: "machine", observations: ["computes"]}]}],
	      ["create_relations", {relations: [{from: "Ada", to: "Engine", relationType: "programs"}]}],
	      ["add_observations", {observations: [{entityName: "Ada", contents: ["was a countess"]}]}],
	      ["read_graph", {}],
	      ["search_nodes", {query: "Ada"}],
	      ["open_nodes", {names: ["Ada"]}],
	      ["delete_observations", {deletions: [{entityName: "Ada", observations: ["was a countess"]}]}],
	      ["delete_relations", {relations: [{from: "Ada", to: "Engine", relationType: "programs"}]}],
	      ["delete_entities", {entityNames: ["Engine"]}]
	    ] | map({tool_calls: [{name: .[0], arguments: .[1]}]})) + [{content: "all done"}])}}'
	ring ref go
	[ "$status" -eq 0 ] || fail "$output $(logged tool.call.errored)"
	assert_eq "$(jq -c 'select(.type == "completion") | .text' "$T/events")" '"all done"'
	# Every tool was offered with its output schema, and every call
	# completed: none failed on its schema.
	assert_eq "$(agentrt-session show "$(sid)" | jq -c '[.config.tools[] | select(has("output"))] | length')" 23
	assert_eq "$(logged tool.call.completed | wc -l)" 23
	assert_eq "$(logged tool.call.errored)" ""
	# The record keeps the structured content beside the text the model read.
	assert_eq "$(logged tool.call.completed | jq -c 'select(.name == "list_allowed_directories") |
	    [(.result | contains("fs")), (.structured_content | type)]')" '[true,"object"]'
	assert_eq "$(logged tool.call.completed | jq -c 'select(.structured_content == null) | .name')" ""
	assert_eq "$(cat "$T/fs/d/b.txt")" "hello there"
	# The model read text, not the structured content's JSON.
	assert_eq "$(agentrt-session log "$(sid)" | jq -r 'select(.payload.type == "message.new") |
	    .payload.message | select(.role == "tool" and .name == "read_text_file") | .content')" "hello world"
}

@test "an MCP tool's structured content is checked against its output schema; none at all is an error too" {
	needs_python
	agent sch --arg c "python3 $top_srcdir/tests/helpers/mcp-schema.py" '{model: "mock/script",
	    mcp_servers: {s: {command: $c}},
	    mock: {script: [{tool_calls: [{name: "good", arguments: {}}]},
	      {tool_calls: [{name: "bad", arguments: {}}]},
	      {tool_calls: [{name: "none", arguments: {}}]},
	      {content: "done"}]}}'
	ring sch go
	[ "$status" -eq 0 ] || fail "$output"
	# The text is what the model reads; the schema applies to the
	# structured content.
	assert_eq "$(logged tool.call.completed | jq -c '[.name, .result, .structured_content]')" \
	    '["good","good said n",{"n":1}]'
	assert_eq "$(logged tool.call.errored | jq -r '[.name, .error] | join(": ")')" \
"bad: structuredContent does not match the tool's output schema: /n: expected integer, got string
none: the tool declares an output schema, and its result has no structuredContent"
}

@test "structured content past --max-output is cut: said, not checked, not kept" {
	needs_python
	agent cut --arg c "python3 $top_srcdir/tests/helpers/mcp-schema.py" '{model: "mock/script",
	    mcp_servers: {s: {command: $c}},
	    mock: {script: [{tool_calls: [{name: "bad", arguments: {}}]}, {content: "done"}]}}'
	TOOL_OPTS="--max-output 8" ring cut go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(logged tool.call.completed | jq -c '[.name, .result, has("structured_content")]')" \
	    '["bad","bad said\n[output truncated at 8 bytes]",false]'
	grep -q 'structuredContent of 11 bytes cut by --max-output 8: not checked, not kept' "$T/tool.err" ||
	    fail "$(cat "$T/tool.err")"
}
