#!/usr/bin/env bats
# decision.error through whole rings: what the engine makes of a worker
# that dies, refuses, or keeps failing

load lib

export T=$BATS_TEST_TMPDIR

# A worker in jq that takes every proposal and leaves tool and model calls
# to the later stages.
PROPOSE='jq -c --unbuffered "if .trigger.type == \"tool.execute\" or .trigger.type == \"llm.execute\" then null else .proposed end"'

@test "a worker that dies mid-turn is replaced and the decision sent again" {
	# It dies on its second request (the model's answer), once.
	DECIDE_EXEC='n=0; while read -r l; do n=$((n+1)); if [ $n -eq 2 ] && [ ! -e "$T/died" ]; then touch "$T/died"; exit 9; fi; printf "%s\n" "$l" | '"$PROPOSE"'; done'
	export DECIDE_EXEC
	ring_exec -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type == "completion") | .text')" '"17*23 = 391"'
	assert_eq "$(log_of '[.[].payload | select(.type == "decision.errored")] |
	    map([.retryable, (.error | test("exited with status 9 before answering"))])')" \
	    '[[true,true]]'
	# The client was told, and told it is being retried.
	assert_eq "$(events 'select(.type == "error") | [.code, .retrying]')" '["decision_error",true]'
	# The same decision went out again, as attempt 2.
	id=$(log_of '[.[].payload | select(.type == "decision.errored")][0].id')
	assert_eq "$(log_of "[.[].payload | select(.type == \"decision.dispatched\" and .id == \"$id\") | .attempts]")" '[1,2]'
}

@test "a worker's refusal fails the turn with its words" {
	DECIDE_EXEC='while read -r l; do echo "{\"type\":\"decision.error\",\"error\":\"not today\"}"; done'
	export DECIDE_EXEC
	ring_exec -a calc -m 'What is 17*23?'
	[ "$status" -eq 1 ]
	assert_eq "$(log_of '[.[].payload | select(.type == "decision.errored") | .retryable]')" '[false]'
	[[ "$(log_of '[.[].payload | select(.type == "turn.completed")][0].error')" == *"not today"* ]] ||
	    fail "$(log_of '[.[].payload | select(.type == "turn.completed")]')"
}

@test "a decision that keeps failing retryably is given up after ten attempts" {
	DECIDE_EXEC='while read -r l; do echo "{\"type\":\"decision.error\",\"error\":\"busy\",\"retryable\":true}"; done'
	export DECIDE_EXEC
	ring_exec -a calc -m 'What is 17*23?'
	[ "$status" -eq 1 ]
	assert_eq "$(log_of '[.[].payload | select(.type == "decision.errored") | .retryable] | [length, .[-1], (.[:-1] | all)]')" '[10,false,true]'
	[[ "$(log_of '[.[].payload | select(.type == "turn.completed")][0].error')" == *"failed too often: worker"*"busy"* ]]
}
