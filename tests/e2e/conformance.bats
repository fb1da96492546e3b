#!/usr/bin/env bats
# Conformance: every DecisionRequest, DecisionResponse, Trigger, LlmRequest
# and LlmResponse representative rings put on the wire, and the
# ClientInputs they are sent, validated against JSON Schemas of the seed
# protocol written from its text (tests/fixtures/seed/protocol.json),
# through lib/schema (tests/helpers/seed-check).  The full views are what
# a worker sees (agentrt-decide --exec) and what agentrt-session request
# prints for the same by-reference line; both are checked, and must agree.

load lib

SCHEMA="$top_srcdir/tests/fixtures/seed/protocol.json"
CHECK="$top_builddir/tests/helpers/seed-check"

setup() {
	REC=$BATS_TEST_TMPDIR/rec
	mkdir -p "$REC"
	: >"$REC/requests" >"$REC/byref" >"$REC/answers" >"$REC/wire" >"$REC/inputs"
	export REC
	# The recording worker: each request as it saw it, the same decision
	# as agentrt-session request prints it, and its answer: the proposal
	# (executes pass on to agentrt-llm and agentrt-tool).
	cat >"$REC/worker.sh" <<'W'
#!/bin/sh
while IFS= read -r l; do
	printf '%s\n' "$l" >>"$REC/requests"
	sid=$(printf '%s\n' "$l" | jq -r .session_id)
	agentrt-session request "$sid" >>"$REC/byref" 2>>"$REC/byref.err"
	a=$(printf '%s\n' "$l" | jq -c 'if .trigger.type == "tool.execute" or
	    .trigger.type == "llm.execute" then null else .proposed end')
	[ "$a" = null ] || printf '%s\n' "$a" >>"$REC/answers"
	printf '%s\n' "$a"
done
W
	chmod +x "$REC/worker.sh"
}

# cring RUN-ARGS...: decide --exec (the recording worker) | llm | tool |
# session run, every line between the stages kept in $REC/wire, and each
# --input given kept in $REC/inputs.  Each pipe is kept in a file of its
# own while the ring runs, then added to wire: four tees appending to one
# file can interleave a line longer than one write.
cring() {
	local fifo="$BATS_TEST_TMPDIR/ring" prev=

	for a in "$@"; do
		[ "$prev" = --input ] && printf '%s\n' "$a" >>"$REC/inputs"
		prev=$a
	done
	rm -f "$fifo"
	mkfifo "$fifo"
	run timeout 60 bash -c '
		set -o pipefail		# the session, before the last tee
		fifo=$1; shift
		err=$BATS_TEST_TMPDIR/stages.err
		agentrt-decide --exec "$REC/worker.sh" <"$fifo" 2>>"$err" |
		tee "$REC/pipe.d2l" | agentrt-llm 2>>"$err" | tee "$REC/pipe.l2t" |
		agentrt-tool --tools "$top_srcdir/tests/fixtures/tools" \
		    --tools "$top_srcdir/examples/tools" 2>>"$err" |
		tee "$REC/pipe.t2s" |
		AGENTRT_AGENTS="$AGENTS" agentrt-session run --events "$EVENTS" "$@" |
		tee "$REC/pipe.s2d" >"$fifo"
	' ring "$fifo" "$@"
	cat "$REC"/pipe.* >>"$REC/wire"
	rm -f "$REC"/pipe.*
}

# check DEF FILE [JQ]: every line of FILE (through JQ, one value a line)
# conforms to the seed's DEF.
check() {
	local f=$BATS_TEST_TMPDIR/check.ndjson

	jq -c "${3:-.}" "$2" >"$f" || fail "jq over $2 failed"
	[ -s "$f" ] || return 0
	run "$CHECK" "$SCHEMA" "$1" "$f"
	[ "$status" -eq 0 ] || fail "$1 from $(basename "$2"): $output"
}

# conforms: everything recorded so far is in the seed's shapes.
conforms() {
	[ -s "$REC/requests" ] || fail "the worker saw no request"
	[ -s "$REC/byref" ] || fail "agentrt-session request printed nothing: $(cat "$REC/byref.err")"
	check DecisionRequest "$REC/requests"
	check Trigger "$REC/requests" .trigger
	check DecisionRequest "$REC/byref"
	check DecisionResponse "$REC/answers"
	# What the stages answered on the ring, and the model calls.
	check DecisionResponse "$REC/wire" 'select(.type == "decision.response")'
	check LlmRequest "$REC/wire" 'select(.type == "llm.request") | .request'
	check LlmResponse "$REC/wire" 'select(.type == "llm.result") | .response'
	if grep -q '"llm.execute"' "$REC/requests"; then
		check LlmRequest "$REC/requests" 'select(.trigger.type == "llm.execute" and
		    (.trigger | has("format") | not)) | .trigger.request'
	fi
	if grep -q '"llm.result"' "$REC/wire"; then
		check LlmResponse "$REC/wire" 'select(.type == "decision.response") |
		    .actions[]? | select(.type == "llm.result") | .response'
	fi
	# Every trigger recorded, in every session of the store.
	for sid in $(agentrt-session ls -q); do
		agentrt-session log "$sid"
	done >"$BATS_TEST_TMPDIR/log"
	# (A client input is recorded as it came, and made the seed's
	# client.messages trigger when its decision goes out: checked above.)
	check Trigger "$BATS_TEST_TMPDIR/log" 'select(.payload.type == "decision.queued") |
	    .payload.trigger | select(.type | startswith("client.message") | not)'
	if [ -s "$REC/inputs" ]; then
		check ClientInput "$REC/inputs"
	fi
	# The worker's view and agentrt-session request's are one view: the
	# same conversation, tree, state, config and proposal.  (request
	# rebuilds the line from the session as it is now, so the calls
	# parallel work moves on, and the turn a session.start's was sent
	# before, may be newer.)
	local same='del(.calls, .pending_calls) | if .trigger.type == "session.start" then del(.turn_id) else . end'
	assert_eq "$(jq -S -c "$same" "$REC/byref")" "$(jq -S -c "$same" "$REC/requests")"
}

# --- the schemas refuse what slips ---------------------------------------

# rejects DEF JSON WHY: seed-check refuses the line, saying WHY.
rejects() {
	run "$CHECK" "$SCHEMA" "$1" <<<"$2"
	[ "$status" -eq 1 ] || fail "$1 took $2: $output"
	[[ "$output" == *"$3"* ]] || fail "$1: expected '$3' in: $output"
}

@test "the schemas are usable, and a deliberately wrong line of each shape is refused" {
	run "$CHECK" "$SCHEMA" Trigger <<<'{"type": "session.start"}'
	[ "$status" -eq 0 ] || fail "$output"
	rejects Call '{"id": "c", "kind": "tool_call", "status": "held", "attempt": 1}' \
	    '/status: expected one of'
	rejects WorkerIdentity 'null' 'expected object'
	rejects MessageTree '{"nodes": [], "head_id": null}' '/head_id: expected string'
	rejects RetryPolicy '{"max_retries": 1, "backoff_base_secs": 0, "backoff_max_secs": 0}' \
	    "missing required property 'timeout_secs'"
	rejects Trigger '{"type": "llm.finished", "id": "l", "ok": false, "truncated": false, "code": "oops"}' \
	    '/code: expected one of'
	rejects Trigger '{"type": "tool.finished", "id": "t", "ok": true}' \
	    "missing required property 'name'"
	rejects Trigger '{"type": "session.begin"}' 'matches none of oneOf'
	rejects Action '{"type": "tool.call", "name": "calc"}' \
	    "missing required property 'arguments'"
	rejects Action '{"type": "llm.call", "handler": "client"}' '/handler: expected one of'
	rejects ClientInput '{"type": "client.message", "message": {"role": "user", "content": "hi"}}' \
	    "missing required property 'agent_id'"
	rejects ClientInput '{"type": "tool.error", "id": "t", "error": "no"}' \
	    "missing required property 'retryable'"
	rejects LlmRequest '{"model": "m", "messages": [{"role": "robot", "content": "hi"}]}' \
	    '/messages/0/role: expected one of'
	rejects LlmResponse '{"content": "hi"}' "missing required property 'model'"
	rejects DecisionResponse '{"actions": [{"type": "done"}], "agent": {"system": "x"}}' \
	    "missing required property 'model'"
	rejects DecisionRequest '{"session_id": "s"}' "missing required property 'decision_id'"
	rejects Message '{"id": "m", "role": "assistant", "content": null}' 'matches none of anyOf'
}

# --- rings ----------------------------------------------------------------

@test "conformance: a chat" {
	cring -a echo -m 'hello, seed'
	[ "$status" -eq 0 ] || fail "$output"
	conforms
}

@test "conformance: a reply with images carries them on its message as image_url parts" {
	cring -a pic -m 'draw it'
	[ "$status" -eq 0 ] || fail "$output"
	conforms
	local want='[{"type":"text","text":"here it is"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]'
	# The transcript, the client's message event and the export all
	# have the parts; the answer is the text.
	assert_eq "$(agentrt-tree path "$(the_session)" | jq -c 'select(.role ==
	    "assistant") | .content')" "$want"
	assert_eq "$(events 'select(.type == "message" and
	    .message.role == "assistant") | .message.content')" "$want"
	assert_eq "$(events 'select(.type == "completion") | .text')" '"here it is"'
	assert_eq "$(agentrt-session export "$(the_session)" | jq -c 'select(
	    .payload.type? == "message.new") | .payload.message |
	    select(.role == "assistant") | .content')" "$want"
}

@test "conformance: a tool loop" {
	cring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	conforms
}

@test "conformance: an autonomous plan worked through, and a structured answer" {
	AGENTRT_TOOLS="$top_srcdir/examples/tools" cring -a planner -m 'Work out 17*23 and count some words'
	[ "$status" -eq 0 ] || fail "$output"
	AGENTRT_TOOLS="$top_srcdir/examples/tools" cring -a analyst -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	# The engine's own parts ride beside the seed's shapes.
	grep -q '"step_goal":"Work out 17\*23"' "$REC/wire" || fail "no step_goal on the wire"
	grep -q '"response_format":{"name":"structured_answer"' "$REC/wire" || fail "no response_format on the wire"
	conforms
}

@test "conformance: parallel tools" {
	cring -a parallel -m go
	[ "$status" -eq 0 ] || fail "$output"
	conforms
}

@test "conformance: an approval held, then resumed" {
	cring -a guarded -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	iid=$(agentrt-session show "$(the_session)" | jq -r '.interrupts | keys[0]')
	# A client.action passes the interrupt, and its request lists the
	# held call: the seed's queued, held beside it.
	cring -s "$(the_session)" --input '{"type": "client.action", "agent_id": "guarded", "name": "peek"}'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	assert_eq "$(jq -c 'select(.trigger.type == "client.action") | .calls | map([.status, .held, .interrupt_id == $i])' \
	    --arg i "$iid" "$REC/requests")" '[["queued",true,true]]'
	cring -s "$(the_session)" --input "$(jq -nc --arg i "$iid" \
	    '{type: "interrupt.resume", interrupt_id: $i, payload: {approved: true}}')"
	[ "$status" -eq 0 ] || fail "$output"
	conforms
}

@test "conformance: ask_user" {
	cring -a asker -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	iid=$(agentrt-session show "$(the_session)" | jq -r '.interrupts | keys[0]')
	cring -s "$(the_session)" --input "$(jq -nc --arg i "$iid" \
	    '{type: "interrupt.resume", interrupt_id: $i, payload: {answer: "blue"}}')"
	[ "$status" -eq 0 ] || fail "$output"
	conforms
}

@test "conformance: client tools, declared and registered through ClientContext.tools" {
	cring -a ask -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	call=$(events 'select(.type=="tool_call") | .id' | jq -r .)
	cring -s "$(the_session)" --input "$(jq -nc --arg id "$call" \
	    '{type: "tool.result", id: $id, result: "yes"}')"
	[ "$status" -eq 0 ] || fail "$output"
	tools='[{"name": "pick_color", "description": "the page asks", "input": {"type": "object"}}]'
	cring -a client-tools --input "$(jq -nc --argjson t "$tools" \
	    '{type: "client.messages", agent_id: "client-tools",
	      messages: [{role: "user", content: "pick one"}], client: {tools: $t}}')"
	[ "$status" -eq 3 ] || fail "status $status: $output"
	sid=$(agentrt-session ls -q | tail -1)
	call=$(agentrt-session show "$sid" | jq -r '.open | keys[0]')
	cring -s "$sid" --input "$(jq -nc --arg id "$call" \
	    '{type: "tool.error", id: $id, error: "the page closed", retryable: false}')"
	[ "$status" -eq 0 ] || fail "$output"
	conforms
}

@test "conformance: sub-agents" {
	cring -a boss -m go
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(jq -s 'map(.ancestry | length) | max' "$REC/requests")" -ge 1 ] ||
	    fail "no child's decision was seen"
	conforms
}

@test "conformance: a model error retried, then one that parks and is resumed" {
	cring -a model-flaky -m go
	[ "$status" -eq 0 ] || fail "$output"
	cring -a model-down -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	sid=$(agentrt-session ls -q | tail -1)
	iid=$(agentrt-session show "$sid" | jq -r '.interrupts | keys[0]')
	cring -s "$sid" --input "$(jq -nc --arg i "$iid" '{type: "interrupt.resume", interrupt_id: $i}')"
	[ "$status" -eq 3 ] || fail "status $status: $output"
	jq -e 'select(.trigger.type == "llm.finished" and .trigger.ok == false)' "$REC/requests" >/dev/null ||
	    fail "no failed llm.finished was seen"
	conforms
}

@test "conformance: a client.messages edit forks the conversation" {
	cring -a echo -m first
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(the_session)
	view=$(agentrt-session log "$sid" | jq -s -c \
	    '[.[] | select(.payload.type=="message.new") | .payload.message][0:1] |
	     .[0] |= (del(.id) | .content = "first, edited")')
	cring -s "$sid" --input "$(jq -nc --argjson m "$view" \
	    '{type: "client.messages", agent_id: "echo", messages: $m}')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" '"first, edited"'
	conforms
}

@test "conformance: a worker-run model call (llm.execute, llm.result from agentrt-llm)" {
	cring -a worker-llm -m 'run it yourself'
	[ "$status" -eq 0 ] || fail "$output"
	grep -q '"llm.execute"' "$REC/requests" || fail "no llm.execute was seen"
	conforms
}
