#!/usr/bin/env bats
# Interrupts on real rings: a turn parks (exit 3), says why, refuses new
# messages, and goes on when resumed; approval-gated tools and ask_user
# are interrupts a person answers.

load lib

POLICIES="$top_srcdir/tests/fixtures/policies"

# The open interrupt's id (the session has one).
open_interrupt() {
	agentrt-session show "$(the_session)" | jq -r '.interrupts | keys[0]'
}

@test "an approval-gated tool parks the ring; approved, it runs once and the turn completes" {
	ring -a guarded -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	sid=$(the_session)
	show=$(agentrt-session show "$sid")
	assert_eq "$(jq -c '[.calls[] | [.name, .status]]' <<<"$show")" '[["calc","held"]]'
	assert_eq "$(jq -c '[.interrupts[] | [.origin, .reason, .payload.type, .payload.tool_name, .payload.arguments]]' <<<"$show")" \
		'[["system","approval required: calc","approval","calc",{"expr":"6*7"}]]'
	# The key is sha256 of session:loop_iteration:tool_call_id (one model
	# call so far).
	tcid=$(jq -r '.interrupts[].payload.tool_call_id' <<<"$show")
	key=$(printf '%s' "$sid:1:$tcid" | sha256sum | cut -d' ' -f1)
	assert_eq "$(jq -r '.interrupts[].payload.idempotency_key' <<<"$show")" "$key"
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.dispatched")] | length')" 0
	ring -s "$sid" --resume "$(open_interrupt)" --payload '{"approved":true}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"calc said: 42"'
	assert_eq "$(log_of '[.[].payload.type | select(startswith("tool.call."))]')" \
		'["tool.call.requested","tool.call.held","tool.call.approved","tool.call.dispatched","tool.call.completed"]'
}

@test "an approval resumed twice runs the tool once; the second resume is a no-op that says so" {
	ring -a guarded -m go
	[ "$status" -eq 3 ]
	sid=$(the_session)
	iid=$(open_interrupt)
	resume="{\"type\":\"interrupt.resume\",\"interrupt_id\":\"$iid\",\"payload\":{\"approved\":true}}"
	ring -s "$sid" --input "$resume" --input "$resume"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	[[ $output == *"no_interrupt: no open interrupt '$iid' (unknown, or already resumed): nothing done"* ]] || fail "$output"
	ring -s "$sid" --resume "$iid" --payload '{"approved":true}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	[[ $output == *"no_interrupt"* ]] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.dispatched" or .type=="tool.call.completed")] | length')" 2
	assert_eq "$(log_of '[.[].payload | select(.type=="session.interrupt_resumed")] | length')" 1
	assert_eq "$(log_of '[.[].payload | select(.type=="turn.completed")] | length')" 1
}

@test "an approval denied is a tool error the model reads; the tool never runs" {
	ring -a guarded -m go
	[ "$status" -eq 3 ]
	ring -s "$(the_session)" --resume "$(open_interrupt)" --payload '{"approved":false,"reason":"not today"}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"calc said: the user did not approve calc: not today"'
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.dispatched")] | length')" 0
}

@test "an approval payload without approved is refused and the interrupt stays open" {
	ring -a guarded -m go
	[ "$status" -eq 3 ]
	iid=$(open_interrupt)
	ring -s "$(the_session)" --resume "$iid" --payload '{"ok":1}'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	[[ $output == *'bad_input: an approval needs {"approved": true}'* ]] || fail "$output"
	assert_eq "$(open_interrupt)" "$iid"
}

@test "ask_user asks with options; a wrong answer is refused, a right one is the tool's result" {
	ring -a asker -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.interrupts[] | [.reason, .payload.type, .payload.question, .payload.options, .payload.allow_text]]')" \
		'[["Which colour?","input_required","Which colour?",["red","blue"],false]]'
	assert_eq "$(events 'select(.type=="status" and .status=="suspended") | .payload.type')" '"input_required"'
	ring -s "$(the_session)" --resume "$(open_interrupt)" --payload '"purple"'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	[[ $output == *"the answer must be one of: red, blue"* ]] || fail "$output"
	ring -s "$(the_session)" --resume "$(open_interrupt)" --payload '"blue"'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	# The model reads the runtime API's answer envelope: an option is the choice.
	assert_eq "$(events 'select(.type=="completion") | .text')" '"colour: {\"choice\":\"blue\"}"'
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed") | .result | fromjson]')" '[{"choice":"blue"}]'
}

# answer PAYLOAD: the open interrupt of the session resumed with PAYLOAD.
answer() {
	ring -s "$(the_session)" --resume "$(open_interrupt)" --payload "$1"
}

@test "ask_user: the envelope keeps choice, text and who answered; answerable_by is enforced" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "mock/script", "ask_user": true, "mock": {"script": [
	    {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which colour?",
	        "options": ["red", "blue"], "allow_text": true,
	        "answerable_by": ["alice", "bob"]}}]},
	    {"content": "got {{tool}}"}]}}' >"$BATS_TEST_TMPDIR/agents/asker2.json"
	export AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS"
	ring -a asker2 -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.interrupts[] | .payload.answerable_by]')" \
	    '[["alice","bob"]]'
	# Nobody named, or someone not on the list: refused, still open.
	answer '{"choice": "red"}'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	[[ $output == *"this question is answerable by alice, bob only: give answered_by"* ]] || fail "$output"
	answer '{"choice": "red", "answered_by": "eve"}'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	# A choice not among the options, a text that is not a string.
	answer '{"choice": "green", "answered_by": "bob"}'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	[[ $output == *"the choice must be one of: red, blue"* ]] || fail "$output"
	answer '{"text": 7, "answered_by": "bob"}'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	[[ $output == *"an ask_user answer's text must be a string"* ]] || fail "$output"
	# A choice and a text, where the question takes text: both kept.
	answer '{"choice": "red", "text": "a dark red", "answered_by": "bob"}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed") | .result | fromjson]')" \
	    '[{"choice":"red","text":"a dark red","answered_by":"bob"}]'
	assert_eq "$(events 'select(.type=="completion") | .text')" \
	    '"got {\"choice\":\"red\",\"text\":\"a dark red\",\"answered_by\":\"bob\"}"'
}

@test "ask_user with options only: text is refused, a bare answer that is no option too" {
	ring -a asker -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	answer '{"choice": "red", "text": "darker"}'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	[[ $output == *"the answer must be one of: red, blue"* ]] || fail "$output"
	answer '{"answer": "red", "answered_by": "me"}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed") | .result | fromjson]')" \
	    '[{"choice":"red","answered_by":"me"}]'
}

@test "a policy's interrupt parks the branch, refuses messages, and the turn goes on after resume" {
	DECIDE="-f $POLICIES/interrupt-once.jq"
	ring -a echo -m hello
	[ "$status" -eq 3 ] || fail "status $status: $output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.status, [.interrupts[] | [.reason, .payload]]]')" \
		'["running",[["look at the reply first",{"type":"review"}]]]'
	ring -s "$(the_session)" -m 'are you there?'
	[ "$status" -eq 3 ]
	[[ $output == *"interrupted: the branch is parked on interrupt"*"(look at the reply first)"* ]] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="turn.started")] | length')" 1
	ring -s "$(the_session)" --resume "$(open_interrupt)"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	# Resumed, the model is asked again over the transcript.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 2
	assert_eq "$(events 'select(.type=="completion") | .text')" '"hello"'
}

@test "--resume and --payload: usage errors" {
	run agentrt-session run -a echo --resume x
	[ "$status" -eq 2 ] && [[ $output == *"--resume needs -s SESSION"* ]] || fail "$output"
	run agentrt-session run -s x --payload '{}'
	[ "$status" -eq 2 ] && [[ $output == *"--payload goes with --resume ID"* ]] || fail "$output"
	ring -a guarded -m go
	ring -s "$(the_session)" --resume "$(open_interrupt)" --payload '{oops'
	[ "$status" -eq 2 ] && [[ $output == *"--payload:"* ]] || fail "$output"
}
