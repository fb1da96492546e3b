#!/usr/bin/env bats
# agui.bats - agentrt-session run --events-format ag-ui: whole rings whose
# events are AG-UI's.  Every line is checked by @ag-ui/core's EventSchemas
# and every stream by @ag-ui/client's verifyEvents (tests/helpers/
# agui-check.mjs; the packages from `make agui-core`, skipped without
# them); what each run says is checked with jq.

load lib

setup() {
	effect_setup
}

# agui: the events file through the oracle; fails naming the bad line.
agui() {
	run timeout 60 node "$top_srcdir/tests/helpers/agui-check.mjs" <"$EVENTS"
	[ "$status" -eq 0 ] || fail "$output"$'\n'"$(cat "$EVENTS")"
}

# types: the events' types, one string.
types() {
	jq -r .type "$EVENTS" | paste -sd' '
}

@test "a tool loop: run, steps, the call and its result, the answer, the thread whole" {
	need_agui
	ring -a calc -m 'What is 17*23?' --events-format ag-ui
	[ "$status" -eq 0 ] || fail "$output"
	agui
	sid=$(the_session)
	assert_eq "$(events 'select(.type == "RUN_STARTED") | .threadId')" "\"$sid\""
	assert_eq "$(types)" "RUN_STARTED STEP_STARTED CUSTOM STEP_FINISHED TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END STEP_STARTED TOOL_CALL_RESULT STEP_FINISHED STEP_STARTED CUSTOM STEP_FINISHED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END MESSAGES_SNAPSHOT RUN_FINISHED"
	assert_eq "$(events 'select(.type == "TOOL_CALL_RESULT") | .content')" '"391"'
	# The mock does not stream: every event came of one with an "at".
	assert_eq "$(jq -s 'all(.timestamp | type == "number")' "$EVENTS")" true
	assert_eq "$(events 'select(.type == "TOOL_CALL_ARGS") | .delta')" '"{\"expr\":\"17*23\"}"'
	assert_eq "$(events 'select(.type == "RUN_FINISHED") | [.result, .outcome.type, .usage[0].totalTokens > 0]')" \
	    '["17*23 = 391","success",true]'
	# The snapshot is the session's path, as agentrt-tree reads it.
	assert_eq "$(events 'select(.type == "MESSAGES_SNAPSHOT") | .messages | map(.id)')" \
	    "$(agentrt-tree path "$sid" | jq -sc 'map(.id)')"
	assert_eq "$(events 'select(.type == "CUSTOM") | .name' | sort -u)" '"agentrt.metrics"'
}

@test "streamed tokens are one text message: START, a CONTENT a token, END" {
	need_agui
	ring -a stream -m 'hello there you' --events-format ag-ui
	[ "$status" -eq 0 ] || fail "$output"
	agui
	[ "$(events 'select(.type == "TEXT_MESSAGE_CONTENT")' | wc -l)" -gt 1 ]
	assert_eq "$(jq -sj 'map(select(.type == "TEXT_MESSAGE_CONTENT") | .delta) | add' "$EVENTS")" \
	    'hello there you'
	assert_eq "$(events 'select(.type | startswith("TEXT_MESSAGE")) | .messageId' | sort -u | wc -l)" 1
	assert_eq "$(events 'select(.type == "TEXT_MESSAGE_START" or .type == "TEXT_MESSAGE_END") | .type' | paste -sd' ')" \
	    '"TEXT_MESSAGE_START" "TEXT_MESSAGE_END"'
}

@test "a client tool parks the turn: the run finishes naming the call pending" {
	need_agui
	tools='[{"name": "pick_color", "description": "the page asks", "input": {"type": "object"}}]'
	ring -a client-tools --events-format ag-ui --input "$(jq -nc --argjson t "$tools" \
	    '{type: "client.messages", agent_id: "client-tools",
	      messages: [{role: "user", content: "pick one"}], client: {tools: $t}}')"
	[ "$status" -eq 3 ] || fail "$output"
	agui
	call=$(events 'select(.type == "TOOL_CALL_START") | .toolCallId' | jq -r .)
	assert_eq "$(events 'select(.type == "RUN_FINISHED") | .outcome' | jq -c --arg c "$call" '. == {type: "success", pendingToolCallIds: [$c]}')" true
	# The client's result: the turn goes on in a run of its own.
	: >"$EVENTS"
	ring -s "$(the_session)" --events-format ag-ui --input "$(jq -nc --arg id "$call" \
	    '{type: "tool.result", id: $id, result: "blue"}')"
	[ "$status" -eq 0 ] || fail "$output"
	agui
	assert_eq "$(jq -sc '[.[0].type, .[1].type, .[-1].type]' "$EVENTS")" '["RUN_STARTED","TOOL_CALL_RESULT","RUN_FINISHED"]'
	assert_eq "$(events 'select(.type == "RUN_FINISHED") | .result')" '"the page picked blue"'
}

@test "an approval: CUSTOM agentrt.interrupt, RUN_FINISHED outcome interrupt; resumed, a run again" {
	need_agui
	ring -a guarded -m 'six times seven' --events-format ag-ui
	[ "$status" -eq 3 ] || fail "$output"
	agui
	iid=$(events 'select(.type == "CUSTOM" and .name == "agentrt.interrupt") | .value.interrupt_id' | jq -r .)
	assert_eq "$(events 'select(.type == "CUSTOM" and .name == "agentrt.interrupt") | .value.payload.tool_name')" '"calc"'
	assert_eq "$(events 'select(.type == "RUN_FINISHED") | .outcome' | jq -c --arg i "$iid" \
	    '[.type, .interrupts[0].id == $i, .interrupts[0].toolCallId != null]')" '["interrupt",true,true]'
	: >"$EVENTS"
	ring -s "$(the_session)" --events-format ag-ui --resume "$iid" --payload '{"approved": true}'
	[ "$status" -eq 0 ] || fail "$output"
	agui
	assert_eq "$(events 'select(.type == "RUN_FINISHED") | .result')" '"calc said: 42"'
}

@test "a failed turn is RUN_ERROR with its code" {
	need_agui
	ring -a lim-loops -m hi --events-format ag-ui
	[ "$status" -eq 1 ] || fail "$output"
	agui
	assert_eq "$(jq -sc '.[-1] | [.type, .code]' "$EVENTS")" '["RUN_ERROR","max_loops"]'
	[ "$(events 'select(.type == "RUN_FINISHED")' | wc -l)" -eq 0 ]
}

@test "an autonomous plan is the run's state: a snapshot, then a JSON Patch a todo" {
	need_agui
	ring -a auto-effect -m go --events-format ag-ui
	[ "$status" -eq 0 ] || fail "$output"
	agui
	assert_eq "$(events 'select(.type == "STATE_SNAPSHOT") | .snapshot.plan.todos | map([.id, .status])')" \
	    '[["todo-1","pending"],["todo-2","pending"]]'
	assert_eq "$(events 'select(.type == "STATE_DELTA") | .delta[] | [.op, .path, .value]' | paste -sd' ')" \
	    '["replace","/plan/todos/0/status","active"] ["replace","/plan/todos/0/status","done"] ["replace","/plan/todos/1/status","active"] ["replace","/plan/todos/1/status","done"]'
}

@test "a sub-agent's events are CUSTOM inside its parent's run" {
	need_agui
	ring -a boss -m 'ask the team' --events-format ag-ui
	[ "$status" -eq 0 ] || fail "$output"
	agui
	root=$(events 'select(.type == "RUN_STARTED") | .threadId' | jq -r .)
	[ "$(events 'select(.type == "RUN_STARTED")' | wc -l)" -eq 1 ]
	[ "$(events 'select(.type == "CUSTOM" and .name == "agentrt.message" and .value.session_id != "'"$root"'")' | wc -l)" -ge 2 ]
	assert_eq "$(events 'select(.type == "RUN_FINISHED") | .result' | jq -r . | cut -d: -f1)" combined
}

@test "a refused input with no turn going is a run of its own that errs" {
	need_agui
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	: >"$EVENTS"
	ring -s "$(the_session)" --events-format ag-ui --resume nosuch --payload '{}'
	agui
	assert_eq "$(jq -sc 'map(.type)' "$EVENTS")" '["RUN_STARTED","RUN_ERROR"]'
	[ -n "$(events 'select(.type == "RUN_ERROR") | .message' | jq -r .)" ]
}

@test "--events-format: a bad one is named; ag-ui is not serve's" {
	run agentrt-session run -a calc -m hi --events "$EVENTS" --events-format bogus
	[ "$status" -eq 2 ]
	[[ $output == *"bad --events-format 'bogus': use ndjson, text or ag-ui"* ]] || fail "$output"
	[ "$(grep -c . <<<"$output")" -eq 1 ]
	run agentrt-session serve --events "$EVENTS" --events-format ag-ui </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *'--events-format ag-ui is one session'* ]] || fail "$output"
}

@test "security notes and structured answers are CUSTOM events of the run" {
	need_agui
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "mock/echo", "security": {}}' >"$BATS_TEST_TMPDIR/agents/sec-echo.json"
	key="AKIA$(printf 'SENTINEL%08d' 0)"
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a sec-echo -m "use $key please" --events-format ag-ui
	[ "$status" -eq 0 ] || fail "$output"
	agui
	assert_eq "$(events 'select(.type == "CUSTOM" and .name == "agentrt.security") | .value | [.pattern_id, .severity]')" \
	    '["aws_access_key","redact"]'
	! grep -q "$key" "$EVENTS"
	: >"$EVENTS"
	AGENTRT_TOOLS="$top_srcdir/examples/tools" ring -a analyst -m 'What is 17*23?' --events-format ag-ui
	[ "$status" -eq 0 ] || fail "$output"
	agui
	[ "$(events 'select(.type == "CUSTOM" and .name == "agentrt.structured_answer")' | wc -l)" -eq 1 ]
	assert_eq "$(events 'select(.type == "RUN_FINISHED") | .result | type')" '"string"'
}

@test "a ring that closes with the turn in flight ends the run in RUN_ERROR, not RUN_FINISHED" {
	need_agui
	# The tool stage refuses its --tools and exits: the call is never
	# answered, and the session exits 1.
	TOOL_ARGS="--tools $BATS_TEST_TMPDIR/nonexistent" \
	    ring -a calc -m 'What is 17*23?' --events-format ag-ui
	[ "$status" -eq 1 ] || fail "$output"
	agui
	assert_eq "$(jq -c 'select(.type == "RUN_ERROR") | [.message, .code]' "$EVENTS")" \
	    '["the ring closed with the turn in flight","run_failed"]'
	[[ $(types) != *RUN_FINISHED* ]] || fail "$(types)"
}
