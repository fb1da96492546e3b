#!/usr/bin/env bats
# Lines by reference (DESIGN §2.1): the ring carries news, not the
# conversation; workers, jq programs and readers still get the seed's shape.

load lib

SID=0190a000-0000-7000-8000-000000000001

# byref_ring TAP ARGS...: decide | llm | tool | session run, with what the
# session writes into the ring copied to TAP.
byref_ring() {
	local tap=$1 fifo="$BATS_TEST_TMPDIR/ring"
	shift
	rm -f "$fifo"
	mkfifo "$fifo"
	export TAP=$tap DECIDE LLM_ARGS
	run timeout 120 bash -c '
		fifo=$1; shift
		tee -a "$TAP" <"$fifo" | agentrt-decide $DECIDE 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-llm $LLM_ARGS 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-tool --tools "$BATS_TEST_TMPDIR/tools" --tools "$top_srcdir/examples/tools" \
		    2>>"$BATS_TEST_TMPDIR/stages.err" |
		AGENTRT_AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" agentrt-session run --events "$EVENTS" "$@" >"$fifo"
	' ring "$fifo" "$@"
}

# loop K: an agent that calls the jq tool step K times, then answers.
loop() {
	mkdir -p "$BATS_TEST_TMPDIR/agents" "$BATS_TEST_TMPDIR/tools"
	printf '.i + 1\n' >"$BATS_TEST_TMPDIR/tools/step.jq"
	jq -n --argjson k "$1" '[range($k) | {tool_calls: [{name: "step", arguments: {i: .}}]}]
	    + [{content: "done after \($k) steps"}]' >"$BATS_TEST_TMPDIR/script-$1.json"
	jq -n --arg f "$BATS_TEST_TMPDIR/script-$1.json" \
	    '{model: "mock/script", system: "Count.", tools: [{name: "step", description: "i+1",
	      input: {type: "object", properties: {i: {type: "number"}}}}], mock: {script_file: $f}}' \
	    >"$BATS_TEST_TMPDIR/agents/loop$1.json"
}

# The longest decision.request line in a tap, in bytes.
longest_request() {
	grep '"type":"decision.request"' "$1" | awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }'
}

@test "a decision.request on the ring stays the same size however long the turn" {
	loop 3
	loop 300
	AGENTRT_DB="$BATS_TEST_TMPDIR/db3" byref_ring "$BATS_TEST_TMPDIR/tap3" -a loop3 -m go
	[ "$status" -eq 0 ] || fail "$output"
	AGENTRT_DB="$BATS_TEST_TMPDIR/db300" byref_ring "$BATS_TEST_TMPDIR/tap300" -a loop300 -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(AGENTRT_DB="$BATS_TEST_TMPDIR/db300" agentrt-session log "$(AGENTRT_DB="$BATS_TEST_TMPDIR/db300" agentrt-session ls -q)" |
	    jq -s '[.[] | select(.payload.type == "message.new")] | length')" 602
	small=$(longest_request "$BATS_TEST_TMPDIR/tap3")
	large=$(longest_request "$BATS_TEST_TMPDIR/tap300")
	[ "$small" -gt 0 ] || fail "no decision.request in the K=3 tap"
	# Longer numbers in the tool's arguments and results, nothing more.
	[ "$large" -le $((small + 64)) ] || fail "K=300: $large bytes, K=3: $small bytes"
	# No request line carries the conversation, the tree, state or config.
	run jq -c 'select(.type == "decision.request") | select(has("messages") or has("message_tree") or has("state"))' \
	    "$BATS_TEST_TMPDIR/tap300"
	assert_eq "$output" ""
	# The session.start decision comes before any config; every other
	# names the config's version.
	run jq -c 'select(.type == "decision.request") | .ref | keys' "$BATS_TEST_TMPDIR/tap300"
	assert_eq "$(sort -u <<<"$output")" '["config","head","seq","store"]
["head","seq","store"]'
	assert_eq "$(jq -c 'select(.type == "decision.request" and (.ref | has("config") | not)) | .trigger.type' \
	    "$BATS_TEST_TMPDIR/tap300")" '"session.start"'
	# Each model request went out built from the one before, its tools
	# named by the config's version: the request the log records for that
	# call, but for the tools.
	export AGENTRT_DB="$BATS_TEST_TMPDIR/db300"
	agentrt-session log "$(agentrt-session ls -q)" |
	    jq -c 'select(.payload.type == "llm.call.requested") | {id: .payload.id, request: .payload.request}' >"$BATS_TEST_TMPDIR/logged.tools"
	assert_eq "$(jq -c '.request.tools' "$BATS_TEST_TMPDIR/logged.tools" | sort -u)" \
	    '[{"name":"step","description":"i+1","input":{"type":"object","properties":{"i":{"type":"number"}}}}]'
	jq -c 'del(.request.tools)' "$BATS_TEST_TMPDIR/logged.tools" >"$BATS_TEST_TMPDIR/logged"
	assert_eq "$(jq -c 'select(.type == "llm.request") | [(.request | has("tools")), (.ref | keys)]' \
	    "$BATS_TEST_TMPDIR/tap300" | sort -u)" '[false,["config","store"]]'
	jq -c 'select(.type == "llm.request") | {id, request}' "$BATS_TEST_TMPDIR/tap300" >"$BATS_TEST_TMPDIR/sent"
	assert_eq "$(wc -l <"$BATS_TEST_TMPDIR/sent")" 301
	cmp "$BATS_TEST_TMPDIR/logged" "$BATS_TEST_TMPDIR/sent" || fail "the requests sent are not those recorded"
	assert_eq "$(tail -1 "$BATS_TEST_TMPDIR/sent" | jq '.request.messages | length')" 602
}

@test "an --exec worker receives the seed's whole DecisionRequest, the same as before" {
	cat >"$BATS_TEST_TMPDIR/worker.sh" <<'W'
#!/bin/sh
tee -a "$CAP" | jq -c --unbuffered 'if .trigger.type == "tool.execute" then null else .proposed end'
W
	chmod +x "$BATS_TEST_TMPDIR/worker.sh"
	mkdir -p "$BATS_TEST_TMPDIR/agents" "$BATS_TEST_TMPDIR/tools"
	cp "$fixtures/byref/loop3.json" "$BATS_TEST_TMPDIR/agents/"
	export CAP="$BATS_TEST_TMPDIR/got.ndjson" AGENTRT_CLOCK=2026-01-01T00:00:00Z
	DECIDE="--exec $BATS_TEST_TMPDIR/worker.sh" AGENTRT_ID_SEED=7 \
	    byref_ring /dev/null -s "$SID" -a loop3 -m go
	[ "$status" -eq 0 ] || fail "$output"
	DECIDE="--exec $BATS_TEST_TMPDIR/worker.sh" AGENTRT_ID_SEED=8 \
	    byref_ring /dev/null -s "$SID" -m more
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(wc -l <"$CAP")" 17
	diff <(jq -cS . "$fixtures/byref/exec-worker.expected.ndjson") <(jq -cS . "$CAP") ||
	    fail "the worker's requests differ from those of commit 4ac0a3f"
}

@test "a jq policy reads the whole request; accepting the proposal needs none of it" {
	loop 2
	DECIDE="-f $top_srcdir/tests/fixtures/byref/shape.jq" byref_ring "$BATS_TEST_TMPDIR/tap" -a loop2 -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"done after 2 steps"'
	# The policy saw the path and the tree grow, and each proposal whole:
	# the path so far and what is new.
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '.state.seen')" \
	    '[[0,0,-1],[0,0,1],[1,1,2],[2,2,3],[3,3,4],[4,4,5],[5,5,6]]'
	# On the ring itself the proposals held only the news.
	assert_eq "$(jq -c 'select(.type == "decision.request" and .proposed.messages != null) | .proposed.messages | length' \
	    "$BATS_TEST_TMPDIR/tap" | sort -u | tr '\n' ' ')" '1 '
}

@test "a by-reference line whose store is gone is an error line, and passed on" {
	line='{"type":"decision.request","session_id":"s1","decision_id":"d1","trigger":{"type":"session.start"},"proposed":{},"ref":{"store":"'"$BATS_TEST_TMPDIR"'/nowhere","head":null,"seq":3}}'
	run bash -c 'agentrt-decide --jq .proposed 2>"$1"' sh "$BATS_TEST_TMPDIR/err" <<<"$line"
	[ "$status" -eq 0 ]
	grep -q "^agentrt-decide: <stdin>:1: decision 'd1': read it from the store: " "$BATS_TEST_TMPDIR/err" ||
	    fail "$(cat "$BATS_TEST_TMPDIR/err")"
	assert_eq "$(sed -n 1p <<<"$output" | jq -r '[.type, .code] | join(" ")')" "error bad_request"
	sed -n 1p <<<"$output" | jq -r .message | grep -q "^decision 'd1': read it from the store: " ||
	    fail "$output"
	assert_eq "$(sed -n 2p <<<"$output")" "$line"
	run bash -c 'agentrt-decide --jq .proposed 2>/dev/null' <<<'{"type":"decision.request","session_id":"s1","decision_id":"d1","trigger":{"type":"session.start"},"ref":{"head":null}}'
	sed -n 1p <<<"$output" | jq -r .message | grep -qx "decision 'd1': \"ref\" names no store" || fail "$output"
}

@test "a response's messages_after must name a recorded message" {
	DECIDE="--jq {messages_after:\"no-such-node\",messages:[]}" ring -a echo -m hi
	[ "$status" -eq 1 ]
	events 'select(.type=="error") | .message' | grep -q "messages_after: no message 'no-such-node'" ||
	    fail "$(cat "$EVENTS")"
	DECIDE="--jq {messages_after:7,messages:[]}" ring -a echo -m hi
	[ "$status" -eq 1 ]
	events 'select(.type=="error") | .message' | grep -q "messages_after: expected a message id or null" ||
	    fail "$(cat "$EVENTS")"
}

@test "agentrt-session request prints the live decision whole" {
	run bash -c 'AGENTRT_AGENTS="$AGENTS" agentrt-session run -a calc -m "What is 17*23?" </dev/null 2>/dev/null'
	[ "$status" -eq 1 ]
	ring_line=$(sed -n 1p <<<"$output")
	jq -e '.type == "decision.request" and (.ref | type) == "object" and (has("messages") | not)' <<<"$ring_line" >/dev/null ||
	    fail "$ring_line"
	sid=$(the_session)
	run agentrt-session request "$sid"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c 'keys_unsorted' <<<"$output")" \
	    '["type","session_id","decision_id","agent_id","identity","trigger","proposed","state","agent","calls","pending_calls","messages","message_tree","ancestry","attempts","deadline","turn_id"]'
	assert_eq "$(jq -c '[.trigger.type, .agent, .messages, .message_tree, .proposed.agent.model]' <<<"$output")" \
	    '["session.start",null,[],{"nodes":[]},"mock/script"]'
	assert_eq "$(jq -r .decision_id <<<"$output")" "$(jq -r .decision_id <<<"$ring_line")"
	# What a policy would answer.
	assert_eq "$(agentrt-session request "$sid" | agentrt-decide --jq '.proposed' | jq -r .type)" decision.response
	run agentrt-session request no-such-session
	[ "$status" -eq 1 ]
	[[ "$output" == *"no session 'no-such-session'"* ]] || fail "$output"
	ring -a echo -m hi
	[ "$status" -eq 0 ]
	run agentrt-session request "$(the_session)"
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: session '$(the_session)' has no decision waiting for an answer"
}

@test "a worker agentrt-decide starts after reading the store does not inherit it" {
	cat >"$BATS_TEST_TMPDIR/worker.sh" <<'W'
#!/bin/sh
for fd in /proc/$$/fd/*; do readlink "$fd"; done >"$FDS"
exec jq -c --unbuffered 'if .trigger.type == "tool.execute" then null else .proposed end'
W
	chmod +x "$BATS_TEST_TMPDIR/worker.sh"
	export FDS="$BATS_TEST_TMPDIR/fds"
	DECIDE_EXEC="$BATS_TEST_TMPDIR/worker.sh" ring_exec -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	[ -s "$FDS" ] || fail "the worker listed no descriptors"
	run grep -c 'mdb' "$FDS"
	assert_eq "$output" 0
}

# wide N K: an agent of N tools (MCP-sized schemas, the first one "step")
# and a 4 KB system prompt, whose model calls step K times.
wide() {
	mkdir -p "$BATS_TEST_TMPDIR/agents" "$BATS_TEST_TMPDIR/tools"
	printf '.i + 1\n' >"$BATS_TEST_TMPDIR/tools/step.jq"
	jq -n --argjson k "$2" '[range($k) | {tool_calls: [{name: "step", arguments: {i: .}}]}]
	    + [{content: "done after \($k) steps"}]' >"$BATS_TEST_TMPDIR/script-w$2.json"
	jq -n --argjson n "$1" --arg f "$BATS_TEST_TMPDIR/script-w$2.json" '
	    {model: "mock/script", system: ([range(150)] | map("Be careful.") | join(" ")),
	     tools: [range($n) | {name: (if . == 0 then "step" else "tool_\(.)" end),
	        description: "Tool \(.): reads or writes a file the server allows, as MCP servers do.",
	        input: {type: "object", properties: ([range(9) as $p | {key: "p\($p)",
	           value: {type: "string", description: "Parameter \($p): a path relative to an allowed directory."}}]
	           | from_entries), required: ["p0"]}}],
	     mock: {script_file: $f}}' >"$BATS_TEST_TMPDIR/agents/wide$1.json"
}

# The bytes of the lines the session wrote into the ring, but for the
# session.start decision (which carries the agent file, once a session).
step_bytes() {
	jq -c 'select(.trigger.type != "session.start")' "$1" | wc -c
}

@test "an agent's tools cross the ring by version: a step costs the same with 40 tools as with 1" {
	wide 1 20
	wide 40 20
	[ "$(jq -c '.tools' "$BATS_TEST_TMPDIR/agents/wide40.json" | wc -c)" -gt 30000 ] || fail "the tools are too small"
	AGENTRT_DB="$BATS_TEST_TMPDIR/db1" byref_ring "$BATS_TEST_TMPDIR/tap1" -a wide1 -m go
	[ "$status" -eq 0 ] || fail "$output"
	LLM_ARGS="--record $BATS_TEST_TMPDIR/cassette" AGENTRT_DB="$BATS_TEST_TMPDIR/db40" \
	    byref_ring "$BATS_TEST_TMPDIR/tap40" -a wide40 -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text' | sort -u)" '"done after 20 steps"'
	one=$(step_bytes "$BATS_TEST_TMPDIR/tap1")
	forty=$(step_bytes "$BATS_TEST_TMPDIR/tap40")
	[ "$one" -gt 0 ] || fail "nothing in the tap"
	# The same lines but for the agent's name and the store's, each a
	# byte longer in a line ("wide40" for "wide1", "db40" for "db1").
	lines=$(jq -c 'select(.trigger.type != "session.start")' "$BATS_TEST_TMPDIR/tap40" | wc -l)
	[ "$forty" -le $((one + 2 * lines)) ] || fail "1 tool: $one bytes, 40 tools: $forty bytes ($lines lines)"
	# No line on the ring carries a tool's schema or the system prompt's
	# config after the start.
	run grep -c 'Parameter 3' "$BATS_TEST_TMPDIR/tap40"
	assert_eq "$output" 1
	# Yet the model got all 40 tools every step: agentrt-llm read them by
	# the version, as its cassette of the exchanges shows.
	assert_eq "$(jq -c '.request.tools | length' "$BATS_TEST_TMPDIR/cassette" | sort | uniq -c | awk '{print $1, $2}')" '21 40'
	# The config is kept once under its version, not once a call: no
	# recorded request or event holds a tool's schema, yet each call's
	# request reads whole, 40 tools, wherever a client reads it.
	export AGENTRT_DB="$BATS_TEST_TMPDIR/db40"
	assert_eq "$(mdb_dump -s versions -p "$BATS_TEST_TMPDIR/db40" | grep -c '\\00c[0-9a-f]\{32\}$' || true)" 1
	assert_eq "$(mdb_dump -s requests -p "$BATS_TEST_TMPDIR/db40" | grep -c 'Parameter 3' || true)" 0
	assert_eq "$(mdb_dump -s events -p "$BATS_TEST_TMPDIR/db40" | grep 'llm\.call\.requested' | grep -c 'Parameter 3' || true)" 0
	assert_eq "$(agentrt-session log "$(agentrt-session ls -q)" |
	    jq -c 'select(.payload.type == "llm.call.requested") | [(.payload.request.tools | length), (.payload.request | has("config"))]' |
	    sort | uniq -c | awk '{print $1, $2}')" '21 [40,false]'
}

@test "a by-reference llm.request whose version or store cannot be read is an error line, and not answered" {
	wide 3 1
	AGENTRT_DB="$BATS_TEST_TMPDIR/db" byref_ring "$BATS_TEST_TMPDIR/tap" -a wide3 -m go
	[ "$status" -eq 0 ] || fail "$output"
	line=$(jq -c 'select(.type == "llm.request")' "$BATS_TEST_TMPDIR/tap" | head -1)
	[ -n "$line" ] || fail "no llm.request in the tap"
	run agentrt-llm <<<"$(jq -c '.ref.config = "00112233445566778899aabbccddeeff"' <<<"$line")"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(grep -c '^{' <<<"$output")" 1
	assert_eq "$(grep '^{' <<<"$output" | jq -r '[.type, .code] | join(" ")')" 'error bad_request'
	[[ "$output" == *"no config version 00112233445566778899aabbccddeeff"* ]] || fail "$output"
	run agentrt-llm <<<"$(jq -c --arg d "$BATS_TEST_TMPDIR/gone" '.ref.store = $d' <<<"$line")"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(grep '^{' <<<"$output" | jq -r '[.type, .code] | join(" ")')" 'error bad_request'
	[[ "$output" == *"no store in"* ]] || fail "$output"
	run agentrt-llm <<<"$(jq -c '.ref.config = "not hex!"' <<<"$line")"
	assert_eq "$(grep '^{' <<<"$output" | jq -r '[.type, .code] | join(" ")')" 'error bad_request'
	# The line as the ring carries it is answered, with the three tools;
	# a line that names the version but brings tools of its own keeps
	# them, and they are not taken for the version's.
	own=$(jq -c '.request.tools = [{name: "own", description: "mine"}]' <<<"$line")
	run agentrt-llm --record "$BATS_TEST_TMPDIR/c" <<<"$own
$line"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -r .type <<<"$output")" 'llm.result
llm.result'
	assert_eq "$(jq -c '.request.tools | map(.name)' "$BATS_TEST_TMPDIR/c")" '["own"]
["step","tool_1","tool_2"]'
	# A "ref" that names no config version is no reference: the line is
	# taken whole, as before.
	run agentrt-llm <<<"$(jq -c '.ref = {x: 1}' <<<"$line")"
	assert_eq "$(jq -r .type <<<"$output")" llm.result
}

@test "an agent with no tools sends its model requests whole: nothing to name" {
	mkdir -p "$BATS_TEST_TMPDIR/agents" "$BATS_TEST_TMPDIR/tools"
	printf '{"model": "mock/echo", "system": "Echo."}\n' >"$BATS_TEST_TMPDIR/agents/bare.json"
	byref_ring "$BATS_TEST_TMPDIR/tap" -a bare -m hello
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c 'select(.type == "llm.request") | [has("ref"), (.request | has("tools"))]' \
	    "$BATS_TEST_TMPDIR/tap")" '[false,false]'
	assert_eq "$(events 'select(.type=="completion") | .text')" '"hello"'
}
