#!/usr/bin/env bats
# Autonomous mode on whole rings: a goal planned into todos and worked
# through, a stall, max_steps, the todo clamp, a stall parked for a
# person, a kill in mid-plan, and a fork back past the plan.  The engine
# keeps the plan (plan.updated, resolved on the active path) and ends
# the turn; the mock model only plays its script.

load lib

setup() {
	# The example agents name their tools; the engine reads them here.
	export AGENTRT_TOOLS="$top_srcdir/examples/tools"
	effect_setup
}

teardown() {
	kill_stages
}

# completion FIELD: the turn's completion event's field, compact.
completion() {
	events "select(.type==\"completion\") | .$1" | tail -1
}

# requested FILTER: the filter over each model call's request, one a line.
requested() {
	log_of ".[].payload | select(.type==\"llm.call.requested\") | .request | $1"
}

@test "planner: the goal becomes three todos, worked through with tools, and the turn completes" {
	ring -a planner -m 'Work out 17*23 and count some words'
	[ "$status" -eq 0 ] || fail "status $status: $output $(cat "$BATS_TEST_TMPDIR/stages.err")"
	# The plan, as the engine re-numbered it.
	assert_eq "$(events 'select(.type=="decomposition") | [.todos[].id]')" \
	    '["todo-1","todo-2","todo-3"]'
	assert_eq "$(events 'select(.type=="decomposition") | .goal')" \
	    '"Work out 17*23 and count some words"'
	# Each todo went active, then done, in order.
	assert_eq "$(events 'select(.type=="todo") | "\(.id) \(.status)"' | tr -d '"' | tr '\n' ' ')" \
	    'todo-1 active todo-1 done todo-2 active todo-2 done todo-3 active todo-3 done '
	# Five steps after the plan; the last one's verdict ended the turn.
	assert_eq "$(events 'select(.type=="step_progress") | .verdict' | tr -d '"' | tr '\n' ' ')" \
	    'continue continue continue continue completed '
	assert_eq "$(events 'select(.type=="step_progress") | .made_tool_calls' | tr '\n' ' ')" \
	    'true true true true true '
	assert_eq "$(completion reason)" '"completed"'
	assert_eq "$(completion text)" "\"17*23 = 391, and 'the quick brown fox' has 4 words.\""
	# The planning call asked for the plan's format and no tools; each
	# step's call named its todo and offered todo_done.
	assert_eq "$(requested '.step_goal' | head -3 | tr '\n' '|')" \
	    'decompose goal into todo plan|Work out 17*23|Work out 17*23|'
	assert_eq "$(requested '.response_format.name' | head -1)" todo_plan
	assert_eq "$(requested '.tools' | head -1)" null
	assert_eq "$(requested '[(.tools // [])[].name] | index("todo_done") != null' | sed -n 2p)" true
	log_of '[.[].payload | select(.type=="llm.call.requested") | .request |
	    (.prompt.system // .messages[0].content)][1]' | grep -q 'todo-1: Work out 17\*23' ||
	    fail "the step prompt does not name the todo"
	# Each step's call is made for the plan as it stands: the active
	# todo moves on, and todo_done is offered once.
	assert_eq "$(requested '(.prompt.system // .messages[0].content) | capture("\\[>\\] (?<a>todo-[0-9])").a' | tr '\n' ' ')" \
	    'todo-1 todo-1 todo-2 todo-2 todo-3 '
	assert_eq "$(requested '[(.tools // [])[] | select(.name == "todo_done")] | length' | sort -u | tr '\n' ' ')" '0 1 '
	# todo_done was answered by the engine: no tool stage ran it.
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed") | select(.result | tostring | test("is done"))] | length')" 3
	# The plan is session state: show resolves it on the active path.
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.plan.status, [.plan.todos[].status]]')" \
	    '["completed",["done","done","done"]]'
}

@test "staller: the same step over the stall window ends the turn stalled" {
	ring -a staller -m 'Find the answer'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"stalled"'
	assert_eq "$(completion reason)" '"stalled"'
	completion error | grep -q 'no progress in the last 3 steps'
	# Step 1's result was new; 2..4 repeat it, and the engine stopped there.
	assert_eq "$(events 'select(.type=="step_progress") | "\(.produced_new_artifacts) \(.verdict)"' | tr -d '"' | tr '\n' ' ')" \
	    'true continue false continue false continue false stalled '
	assert_eq "$(requested .model | wc -l)" 5
	# The repeated steps hashed the same.
	assert_eq "$(events 'select(.type=="step_progress") | .response_delta_hash' | sort -u | wc -l)" 1
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" failed
}

@test "max_steps: a plan that keeps going stops at its step budget" {
	ring -a auto-max -m 'Count up'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"max_steps"'
	completion error | grep -q 'max_steps reached: 3 steps'
	assert_eq "$(events 'select(.type=="step_progress") | .verdict' | tr -d '"' | tr '\n' ' ')" \
	    'continue continue max_steps '
	# The plan call and three steps: no fourth step was asked for.
	assert_eq "$(requested .model | wc -l)" 4
}

@test "a plan is sorted by ordering, its empty titles dropped, and clamped to max_todos" {
	ring -a auto-clamp -m 'Do the letters'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="decomposition") | [.todos[].title]')" '["a","b"]'
	assert_eq "$(events 'select(.type=="decomposition") | .dropped')" 3
	# todo_done for a todo that is not the active one is refused, and
	# the model reads why; the plan is unchanged.
	assert_eq "$(events 'select(.type=="tool_result" and .error != null) | .error' | head -1)" \
	    '"todo_done: todo-2 is not the active todo (todo-1 is)"'
	assert_eq "$(completion reason)" '"completed"'
}

@test "todo_done: one todo a step, and an id that is not a string is refused" {
	ring -a auto-twice -m 'Do both'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="tool_result" and .error != null) | .error' | tr -d '"')" \
	    "todo_done: a todo was already marked done in this step; one todo a step
invalid tool arguments: /id: expected string, got number"
	assert_eq "$(events 'select(.type=="todo" and .status=="done") | .id' | tr -d '"' | tr '\n' ' ')" 'todo-1 todo-2 '
	assert_eq "$(completion text)" '"second done"'
}

@test "a sub-agent's answer is a step's result" {
	ring -a auto-boss -m 'Ask calc'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="step_progress" and .session_id != null) | [.made_tool_calls, .produced_new_artifacts] | tostring' | head -1)" '"[true,true]"'
	assert_eq "$(completion reason)" '"completed"'
	assert_eq "$(completion text)" '"calc says 17*23 = 391"'
}

@test "a model call that fails is not a step: the turn parks on it, not stalled" {
	ring -a auto-down -m 'Try'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="step_progress")' | wc -l)" 0
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.plan.status, .plan.step]')" '["running",0]'
}

@test "a plan's reply cut short makes no plan" {
	ring -a auto-cut -m 'Try'
	[ "$status" -ne 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="decomposition")' | wc -l)" 0
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c .plan)" null
}

@test "on_stall park: a stall parks the turn, a resume gives it another window, stop ends it" {
	local sid=01900000-0000-7000-8000-0000000000c1 iid
	ring -s "$sid" -a auto-park -m 'Think'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	iid=$(events 'select(.type=="status" and .status=="suspended") | .interrupt_id' | tail -1 | tr -d '"')
	assert_eq "$(events 'select(.type=="status" and .status=="suspended") | .reason' | tail -1)" '"stalled"'
	[ -n "$iid" ] || fail "no interrupt"
	ring -s "$sid" --resume "$iid" --payload '{}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(completion reason)" '"completed"'
	assert_eq "$(completion text)" '"got it"'
}

@test "on_stall park: resumed with stop, the turn ends stalled" {
	local sid=01900000-0000-7000-8000-0000000000c2 iid
	ring -s "$sid" -a auto-park -m 'Think'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	iid=$(events 'select(.type=="status" and .status=="suspended") | .interrupt_id' | tail -1 | tr -d '"')
	ring -s "$sid" --resume "$iid" --payload '{"action":"stop"}'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(completion code)" '"stalled"'
}

@test "the engine killed in mid-plan: the resumed turn keeps its plan, and the tool ran once" {
	local sid=01900000-0000-7000-8000-0000000000c3
	bg_ring -s "$sid" -a auto-effect -m 'Have the effect, then say so'
	wait_lines "$EFFECT_DIR/started" 1
	kill -9 "$(cat "$BATS_TEST_TMPDIR/pids/session")"
	wait "$RING_PID" || true
	# The plan was recorded before the step's tool went out.
	assert_eq "$(agentrt-session show "$sid" | jq -c '[.plan.status, .plan.active]')" '["running","todo-1"]'
	TOOL_ARGS="--env EFFECT_DIR" ring -s "$sid"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(completion reason)" '"completed"'
	assert_eq "$(completion text)" '"the effect is had"'
	assert_eq "$(wc -l <"$EFFECT_DIR/effects")" 1
	# One plan: the resumed turn did not plan again.
	assert_eq "$(agentrt-session log "$sid" | jq -s '[.[].payload | select(.type=="decomposition")] | length')" 1
}

@test "a fork back to the goal forgets the plan; the next turn plans again" {
	local sid=01900000-0000-7000-8000-0000000000c4 goal
	ring -s "$sid" -a planner -m 'Work out 17*23 and count some words'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	goal=$(agentrt-tree path "$sid" | jq -r 'select(.role=="user") | .id' | head -1)
	[ -n "$goal" ] || fail "no goal message"
	run agentrt-tree checkout "$sid" "$goal"
	[ "$status" -eq 0 ] || fail "checkout: $output"
	# On the goal itself, the plan (anchored below it) is not on the path.
	assert_eq "$(agentrt-session show "$sid" | jq -c .plan)" null
	# Back on the plan's branch it is there again.
	run agentrt-tree checkout "$sid" "$(agentrt-tree branches "$sid" | jq -r .id | tail -1)"
	assert_eq "$(agentrt-session show "$sid" | jq -r .plan.status)" completed
}

@test "agentrt-shell shows the plan and ticks its todos off" {
	command -v python3 >/dev/null || skip "no python3"
	run python3 "$top_srcdir/tests/helpers/pty.py" --log "$BATS_TEST_TMPDIR/pty.log" - -- \
	    env NO_COLOR=1 agentrt-shell --agents "$top_srcdir/examples/agents" \
	    --tools "$top_srcdir/examples/tools" -a planner <<-EOF
	expect planner \(new\)> 
	send Work out 17*23 and count some words\r
	expect Plan:\r\n  \[ \] Work out 17\*23\r\n
	expect \[x\] Work out 17\*23
	expect 17\*23 = 391, and 'the quick brown fox' has 4 words.
	expect \[x\] Report both
	expect planner [0-9a-f]{8}> 
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output $(cat "$BATS_TEST_TMPDIR/pty.log")"
	# The plan's reply is drawn as the plan, not as its JSON.
	! grep -q '"todos"' "$BATS_TEST_TMPDIR/pty.log" || fail "the plan's JSON was drawn"
	# Not at a terminal, -c prints the answer alone.
	run agentrt-shell --agents "$top_srcdir/examples/agents" \
	    --tools "$top_srcdir/examples/tools" -a planner -c 'Work out 17*23 and count some words'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" "17*23 = 391, and 'the quick brown fox' has 4 words."
}
