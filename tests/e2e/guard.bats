#!/usr/bin/env bats
# Whole rings under an agent file's guards: the turn limits, prior_turns,
# tool_result_max_bytes, schema_validation_mode and the tool allow-list,
# each held by the engine whatever a decision answers.

load lib

teardown() {
	stop_server 2>/dev/null || true
}

# completion FIELD: the turn's completion event's field, compact.
completion() {
	events "select(.type==\"completion\") | .$1"
}

@test "max_loops: the third model call is not made, and the turn fails with code max_loops" {
	ring -a lim-loops -m go
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"max_loops"'
	completion error | grep -q 'max_loops reached: 2 model calls made in the turn (max_loops 2)'
	assert_eq "$(completion loop_iterations)" 2
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 2
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" failed
	# The turn's record keeps the code, so a replayed turn_id says it too.
	assert_eq "$(log_of '[.[].payload | select(.type=="turn.completed") | .code]')" '["max_loops"]'
}

@test "max_tool_calls: the third tool call is not made" {
	ring -a lim-tools -m go
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"max_tool_calls"'
	completion error | grep -q '2 tool calls made in the turn (max_tool_calls 2)'
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.requested")] | length')" 2
	assert_eq "$(events 'select(.type=="tool_result") | .result' | tr '\n' ' ')" '"2" "4" '
}

@test "max_turn_ms: a turn past its wall clock ends while its tool still runs" {
	ring -a lim-ms -m go
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"max_turn_ms"'
	completion error | grep -q 'max_turn_ms reached'
	# The tool's call was voided, not completed: the model never saw it.
	# (Under valgrind the clock may run out before the call is made.)
	assert_eq "$(log_of '[.[].payload.type | select(. == "tool.call.completed")] | length')" 0
	assert_eq "$(log_of '[.[].payload.type | select(. == "call.voided")] | length')" \
	    "$(log_of '[.[].payload.type | select(. == "tool.call.dispatched")] | length')"
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 1
}

@test "max_turn_cost: a priced model call past the cap is not made" {
	start_server
	OPENAI_BASE_URL="$srv/loop/3/v1" OPENAI_API_KEY=sk-ring-test-key-000111222333 \
	    ring -a lim-cost -m 'add it up'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"max_turn_cost"'
	completion error | grep -q 'max_turn_cost reached: the turn cost 0.0'
	assert_eq "$(wc -l <"$srv_log")" 1
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 1
}

@test "max_session_cost: the session's turns count together" {
	start_server
	local sid=01900000-0000-7000-8000-00000000c057
	# A cap no first call can pass: the first turn runs its first call.
	OPENAI_BASE_URL="$srv/loop/1/v1" OPENAI_API_KEY=sk-ring-test-key-000111222333 \
	    ring -s "$sid" -a lim-session-cost -m 'add it up'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"max_session_cost"'
	assert_eq "$(wc -l <"$srv_log")" 1
	# The next turn of the session makes no call at all.
	OPENAI_BASE_URL="$srv/loop/1/v1" OPENAI_API_KEY=sk-ring-test-key-000111222333 \
	    ring -s "$sid" -m 'again'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code | tail -1)" '"max_session_cost"'
	completion error | tail -1 | grep -q 'max_session_cost reached: the session cost'
	assert_eq "$(wc -l <"$srv_log")" 1
}

@test "prior_turns: the model sees the system prompt, the last N turns and this one" {
	local sid=01900000-0000-7000-8000-0000000001a5 m
	for m in one two three; do
		ring -s "$sid" -a lim-prior -m "$m"
		[ "$status" -eq 0 ] || fail "status $status: $output"
	done
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested") |
	    [.request.messages[] | .content]] | .[2]')" '["Repeat.","two","two","three"]'
	# The path itself keeps every turn.
	assert_eq "$(log_of '[.[].payload | select(.type=="message.new")] | length')" 6
}

@test "tool_result_max_bytes: a longer result is cut between characters, with a note" {
	local a
	for a in lim-cap lim-cap-sec; do
		rm -rf "$AGENTRT_DB" "$EVENTS"
		ring -a "$a" -m go
		[ "$status" -eq 0 ] || fail "$a: status $status: $output"
		# 11 bytes keep five two-byte characters whole: 10 bytes.
		assert_eq "$(events 'select(.type=="tool_result") | .result')" \
		    '"ééééé\n[truncated: 70 of 80 bytes cut by tool_result_max_bytes 11]"'
		assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed") | .result | startswith("ééééé\n[truncated")]')" '[true]'
	done
}

@test "an undeclared tool never runs, even when the decision leaves the call open" {
	DECIDE="-f $top_srcdir/tests/fixtures/policies/leave-open.jq" ring -a undeclared -m go
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="tool_result") | .error')" '"unknown tool: calc"'
	assert_eq "$(completion text)" '"the tool said: unknown tool: calc"'
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.errored") | .retryable]')" '[false]'
}

@test "arguments that fail the schema never run, even when the decision leaves the call open" {
	DECIDE="-f $top_srcdir/tests/fixtures/policies/leave-open.jq" ring -a schema-bad-once -m go
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="tool_result") | .error')" \
	    '"invalid tool arguments: /expr: expected string, got number"'
	assert_eq "$(completion text)" \
	    '"the tool said: invalid tool arguments: /expr: expected string, got number"'
}

@test "schema_validation_mode warn: bad arguments run, and a security event says so" {
	ring -a schema-warn -m go
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="security") | [.violation_code, .severity, .pattern_id, .scope]')" \
	    '["schema_validation_failed","warn","input_schema","tool"]'
	events 'select(.type=="security") | .detail' | grep -q "tool 'calc' arguments: /expr: expected string, got number"
	assert_eq "$(log_of '[.[].payload | select(.type=="security") | .severity]')" '["warn"]'
	# Both calls ran, the first with its number, which calc itself refused.
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.dispatched")] | length')" 2
	log_of '[.[].payload | select(.type=="tool.call.errored") | .error][0]' | grep -q '^calc: expected'
	assert_eq "$(completion text)" '"391"'
}

@test "schema_validation_mode log_only: a result breaking the output schema stands" {
	ring -a schema-out-log -m go
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="security") | [.severity, .pattern_id]')" '["log_only","output_schema"]'
	assert_eq "$(completion text)" '"the tool said: 391"'
}

@test "arguments that fail the schema never run when the decision passes tool.execute on" {
	DECIDE="-f $top_srcdir/tests/fixtures/policies/pass-execute.jq" ring -a schema-bad-once -m go
	[ "$status" -eq 0 ] || fail "status $status: $output"
	# agentrt-tool refused it: calc itself would have said "calc: expected".
	assert_eq "$(events 'select(.type=="tool_result") | .error')" \
	    '"invalid tool arguments: /expr: expected string, got number"'
	grep -q "refused tool 'calc': its arguments are invalid" "$BATS_TEST_TMPDIR/stages.err"
}
