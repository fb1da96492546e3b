#!/usr/bin/env bats
# Whole rings: decide | llm | tool | session run, over a fifo, offline.

load lib

@test "a plain answer: mock/echo repeats the user" {
	ring -a echo -m 'hello, ring'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"hello, ring"'
	assert_eq "$(log_of '[.[].payload.type] | map(select(. == "message.new")) | length')" 2
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" completed
}

@test "the calc example: a tool loop answers 17*23 with the tool's result" {
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	assert_eq "$(events 'select(.type=="tool_result") | [.name, .result]')" '["calc","391"]'
	# The golden trace's order of durable events.
	assert_eq "$(log_of '[.[].payload.type | select(test("^(turn|message|llm.call|tool.call)"))] | join(" ")')" \
		"turn.started message.new llm.call.requested llm.call.dispatched llm.call.completed message.new tool.call.requested tool.call.dispatched tool.call.completed message.new llm.call.requested llm.call.dispatched llm.call.completed message.new turn.completed"
}

@test "events follow seed 002's kinds, in order, with durations" {
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ]
	assert_eq "$(events '.type' | uniq | tr '\n' ' ')" \
		'"turn.started" "message" "status" "metrics" "message" "tool_call" "status" "tool_result" "message" "status" "metrics" "message" "completion" "status" "turn.finished" '
	events 'select(.type=="tool_result") | .duration_ms' | grep -Eq '^[0-9]+$'
	events 'select(.type=="metrics") | [.model, .usage.total, .ttft_ms, .total_ms] | map(type)' | grep -q '"string","number","number","number"'
	assert_eq "$(events 'select(.type=="completion") | [.loop_iterations, (.duration_ms|type), .usage.total > 0, .cost]')" '[2,"number",true,"0"]'
}

@test "two parallel tool calls both land before the model is called again" {
	ring -a parallel -m go
	[ "$status" -eq 0 ] || fail "$output"
	# The second model call's prompt holds both tool results.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")][1].request.messages | map(select(.role=="tool") | .content) | sort')" '["12","3"]'
	# Both tool results are recorded before the second model call is made.
	assert_eq "$(log_of '[.[].payload.type | select(. == "tool.call.completed" or . == "llm.call.requested")] | join(" ")')" \
		"llm.call.requested tool.call.completed tool.call.completed llm.call.requested"
	# Whichever finished last is the last tool message the model saw.
	assert_eq "$(events 'select(.type=="completion") | .text | test("^last: (3|12)$")')" true
}

@test "a tool failure is a tool message the model reads" {
	ring -a badtool -m go
	[ "$status" -eq 0 ] || fail "$output"
	events 'select(.type=="tool_result") | .error' | grep -q 'calc:'
	events 'select(.type=="completion") | .text' | grep -q '^"the tool said: calc:'
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.errored") | .retryable]')" '[false]'
}

@test "a retryable tool error (exit 75) is retried and then succeeds" {
	ring -a flaky-tool -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type | startswith("tool.call.")) | [.type, .attempt]] | map(join(":")) | join(" ")')" \
		"tool.call.requested:1 tool.call.dispatched:1 tool.call.errored:1 tool.call.requested:2 tool.call.dispatched:2 tool.call.completed:2"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"flaky said: worked on attempt 2"'
}

@test "a model error is retried, then the turn parks on an llm.failed interrupt" {
	ring -a model-down -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.errored") | .attempt]')" '[1,2,3]'
	assert_eq "$(events 'select(.type=="status" and .status=="suspended") | .payload | [.type, .error, .code]')" \
		'["llm.failed","overloaded","rate_limited"]'
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.status, (.interrupts | length)]')" '["running",1]'
}

@test "a model error retried within the policy recovers" {
	ring -a model-flaky -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"third time lucky"'
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.errored")] | length')" 2
}

@test "resuming an llm.failed interrupt calls the model again" {
	ring -a model-down -m go
	[ "$status" -eq 3 ]
	sid=$(the_session)
	iid=$(agentrt-session show "$sid" | jq -r '.interrupts | keys[0]')
	ring -s "$sid" --input "{\"type\":\"interrupt.resume\",\"interrupt_id\":\"$iid\"}"
	[ "$status" -eq 3 ]	# the model is still down: parked again
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested" and .attempt==1)] | length')" 2
	assert_eq "$(log_of '[.[].payload.type | select(. == "session.interrupt_resumed")] | length')" 1
}

@test "a jq policy changes what happens: cap the loop at two model calls" {
	DECIDE="-f $top_srcdir/examples/policies/cap-model-calls.jq --argjson max 2"
	ring -a loop -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 2
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed")] | length')" 2
	unset DECIDE
	ring -a loop -m go
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 4
}

@test "a turn_id that completed returns that turn and runs nothing" {
	ring -a echo -m once --turn-id t1
	[ "$status" -eq 0 ]
	sid=$(the_session)
	before=$(agentrt-session show "$sid" | jq .last_seq)
	: >"$EVENTS"
	ring -s "$sid" -m twice --turn-id t1
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"once"'
	assert_eq "$(log_of '[.[].payload | select(.type=="turn.started")] | length')" 1
	assert_eq "$(log_of '[.[].payload | select(.type=="message.new")] | length')" 2
	assert_eq "$(agentrt-session show "$sid" | jq .last_seq)" "$before"
}

@test "a message while a turn is parked is refused" {
	ring -a model-down -m go
	[ "$status" -eq 3 ]
	ring -s "$(the_session)" -m again
	[ "$status" -eq 3 ]
	events 'select(.type=="error") | .code' | grep -q interrupted
	[[ $output == *"interrupted: the branch is parked on interrupt"*"--resume"* ]] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="turn.started")] | length')" 1
}

@test "malformed lines in the ring become error events and the turn completes" {
	INJECT="$top_srcdir/tests/e2e/inject-garbage"
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	codes=$(log_of '[.[].payload | select(.type=="error") | .code] | sort | unique | join(",")')
	[[ "$codes" == *bad_json* && "$codes" == *no_type* && "$codes" == *not_object* ]] || fail "codes: $codes"
}

@test "lines of several MiB go round the ring without a deadlock" {
	big=$(head -c 3000000 /dev/zero | tr '\0' a)
	printf '{"type":"client.message","message":{"role":"user","content":"%s"}}\n' "$big" >"$BATS_TEST_TMPDIR/big.json"
	ring -a echo --input "@$BATS_TEST_TMPDIR/big.json"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text | length')" 3000000
}

# Crash safety: kill -9 one stage mid-turn, then run the ring again.
# Each stage writes its pid first, so only this test's stage is killed.
crash_and_resume() {
	local victim=$1 event=$2 nth=$3 fifo="$BATS_TEST_TMPDIR/ring" p="$BATS_TEST_TMPDIR/pid"

	rm -f "$fifo" && mkfifo "$fifo"
	( sh -c 'echo $$ >"$1.decide"; exec agentrt-decide' pid "$p" <"$fifo" |
	    sh -c 'echo $$ >"$1.llm"; exec agentrt-llm' pid "$p" |
	    sh -c 'echo $$ >"$1.tool"; exec agentrt-tool --tools "$2"' pid "$p" \
		"$top_srcdir/tests/fixtures/tools" |
	    AGENTRT_AGENTS="$AGENTS" sh -c 'echo $$ >"$1.session"; exec agentrt-session run --events "$2" -a slow -m go' \
		pid "$p" "$EVENTS" >"$fifo" ) 2>/dev/null 3>&- &
	# Kill once the log shows the nth event of that type: the same point
	# of the turn however slow the machine is.
	for i in $(seq 1 400); do
		sid=$(agentrt-session ls -q 2>/dev/null | tail -1)
		[ -n "$sid" ] && [ "$(agentrt-session log "$sid" 2>/dev/null |
		    jq -s --arg t "$event" '[.[] | select(.payload.type == $t)] | length')" -ge "$nth" ] && break
		sleep 0.02
	done
	kill -9 "$(cat "$p.$victim")"
	wait || true
	sid=$(the_session)
	[ -n "$sid" ]
	ring -s "$sid"
	[ "$status" -eq 0 ] || fail "resume: status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" '"rested: rested"'
	# No message recorded twice: user, assistant, tool, assistant.
	assert_eq "$(log_of '[.[].payload | select(.type=="message.new") | .message.role] | join(" ")')" "user assistant tool assistant"
	assert_eq "$(log_of '[.[].payload | select(.type=="turn.completed")] | length')" 1
}

@test "crash: the model stage killed during its first call" {
	crash_and_resume llm llm.call.dispatched 1
	log_of '[.[].payload | select(.type=="llm.call.errored") | .error]' | grep -q 'dispatch lost on engine restart'
}

@test "crash: the tool stage killed while the tool runs" {
	crash_and_resume tool tool.call.dispatched 1
}

@test "crash: the engine killed with a decision out" {
	crash_and_resume session decision.dispatched 2
}

@test "crash: the decide stage killed during the second model call" {
	crash_and_resume decide llm.call.dispatched 2
}

@test "a streamed reply arrives as token events that add up to the answer" {
	ring -a stream -m 'streamed words arrive in pieces'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(events 'select(.type=="token")' | wc -l)" -gt 1 ]
	assert_eq "$(jq -r -s '[.[] | select(.type=="token") | .text] | add' "$EVENTS")" 'streamed words arrive in pieces'
	# Each names its place in its reply and its turn, as a client orders
	# and attributes them.
	tid=$(jq -r 'select(.type=="completion") | .turn_id' "$EVENTS")
	[ -n "$tid" ] && [ "$tid" != null ] || fail "the completion names no turn"
	assert_eq "$(jq -c -s --arg t "$tid" '[.[] | select(.type=="token")] |
	    [(map(.index) == [range(length)]), (map(.id) | unique | length),
	     (map(.turn_id) | unique == [$t])]' "$EVENTS")" '[true,1,true]'
	assert_eq "$(events 'select(.type=="completion") | .text')" '"streamed words arrive in pieces"'
	# Tokens are live only: nothing of them is in the log.
	assert_eq "$(log_of '[.[].payload.type | select(test("token"))] | length')" 0
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested") | .stream]')" '[true]'
}

# --- client-handled tools -------------------------------------------------

# The ask agent's turn up to its client tool call: parks with status 3.
park_on_client_tool() {
	ring -a ask -m go
	[ "$status" -eq 3 ] || fail "expected to park (3), got $status: $output"
	call=$(events 'select(.type=="tool_call") | .id' | jq -r .)
	assert_eq "$(events 'select(.type=="tool_call") | [.name, .handler, .arguments]')" \
	    '["confirm","client","{\"q\":\"Go?\"}"]'
	# No stage ran it: it is pending, and nothing settled it.
	assert_eq "$(log_of '[.[].payload.type | select(startswith("tool.call."))] | join(" ")')" \
	    'tool.call.requested tool.call.dispatched'
}

@test "a client tool parks the turn; the client's tool.result finishes it" {
	park_on_client_tool
	ring -s "$(the_session)" --input "$(jq -nc --arg id "$call" \
	    '{type: "tool.result", id: $id, result: "yes"}')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"the user said yes"'
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" completed
}

@test "a client view holding the tool's answer settles the call (the fast path)" {
	park_on_client_tool
	view=$(agentrt-session log "$(the_session)" | jq -s -c --arg id "$call" \
	    '[.[] | select(.payload.type=="message.new") | .payload.message] +
	     [{role: "tool", tool_call_id: $id, content: "yes, from the view"}]')
	ring -s "$(the_session)" --input "$(jq -nc --argjson m "$view" \
	    '{type: "client.messages", agent_id: "ask", messages: $m}')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" \
	    '"the user said yes, from the view"'
	# Settled as a tool.result is; the view itself started no turn.
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed") | .result]')" \
	    '["yes, from the view"]'
	assert_eq "$(log_of '[.[].payload.type | select(. == "turn.started")] | length')" 1
	# The tool message is on the path once, where the call is.
	assert_eq "$(log_of '[.[].payload | select(.type=="message.new") | .message |
	    select(.role=="tool") | .content]')" '["yes, from the view"]'
}

@test "a client view with other news while a client tool waits is refused, not lost" {
	park_on_client_tool
	view=$(agentrt-session log "$(the_session)" | jq -s -c \
	    '[.[] | select(.payload.type=="message.new") | .payload.message] +
	     [{role: "user", content: "never mind"}]')
	ring -s "$(the_session)" --input "$(jq -nc --argjson m "$view" \
	    '{type: "client.messages", agent_id: "ask", messages: $m}')"
	[ "$status" -eq 3 ]
	assert_eq "$(events 'select(.type=="error") | .code' | tail -1)" '"turn_already_active"'
	# The call still waits for its answer.
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c --arg id "$call" '.open | [has($id), length]')" '[true,1]'
}

# --- tool schemas ----------------------------------------------------------

@test "arguments that break the tool's input schema are a tool error the model reads" {
	ring -a schema-in -m go
	[ "$status" -eq 0 ] || fail "$output"
	# The first call's trigger says invalid, with the path; the tool never ran.
	assert_eq "$(log_of '[.[].payload | select(.type=="decision.queued") |
	    .trigger | select(.type=="tool.execute") | .input | [.status, .error]]')" \
	    '[["invalid","/expr: expected string, got number"],["valid",null]]'
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.errored") |
	    [.error, .retryable]]')" \
	    '[["invalid tool arguments: /expr: expected string, got number",false]]'
	# The model corrected itself, and the good call ran.
	assert_eq "$(events 'select(.type=="tool_result") | .result // .error' | jq -s -c .)" \
	    '["invalid tool arguments: /expr: expected string, got number","391"]'
	assert_eq "$(events 'select(.type=="completion") | .text')" '"391"'
}

@test "a result that breaks the tool's output schema is a terminal error naming the path" {
	ring -a schema-out -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.errored") |
	    [.error, .retryable, .attempt]]')" \
	    '[["output does not match the tool'"'"'s output schema: /: expected object, got number",false,1]]'
	assert_eq "$(events 'select(.type=="completion") | .text')" \
	    '"the tool said: output does not match the tool'"'"'s output schema: /: expected object, got number"'
}

@test "schema keywords agentrt does not check, and schemas it cannot use, are said once" {
	ring -a schema-odd -m hi
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(grep -c "keywords not checked" <<<"$output")" 1
	[[ "$output" == *"agent 'schema-odd': tool 'calc' input: keywords not checked: [\"if\",\"then\"]"* ]]
	[[ "$output" == *"agent 'schema-odd': tool 'calc' output: #/pattern: bad regular expression"* ]]
}

@test "an agent names a tool and its declaration comes from the tools directory" {
	AGENTRT_TOOLS="$top_srcdir/examples/tools" ring -a calc-by-name -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	# The model was offered calc.json's declaration, schema and all.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")][0].request.tools')" \
	    "[$(jq -c . "$top_srcdir/examples/tools/calc.json")]"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	# A name no tools directory has is a bad agent, said at once.
	AGENTRT_TOOLS="$BATS_TEST_TMPDIR" ring -a calc-by-name -m hi
	[ "$status" -ne 0 ]
	[[ "$output" == *"agent 'calc-by-name': tool 'calc' is in no tools directory"* ]]
}

@test "cancel: a turn a dead ring left running ends, failed, saying so" {
	local fifo="$BATS_TEST_TMPDIR/ring" p="$BATS_TEST_TMPDIR/pid"

	rm -f "$fifo" && mkfifo "$fifo"
	( agentrt-decide <"$fifo" | agentrt-llm |
	    agentrt-tool --tools "$top_srcdir/tests/fixtures/tools" |
	    AGENTRT_AGENTS="$AGENTS" sh -c 'echo $$ >"$1"; exec agentrt-session run -a slow -m go' \
		pid "$p" >"$fifo" ) 2>/dev/null 3>&- &
	for i in $(seq 1 400); do
		sid=$(agentrt-session ls -q 2>/dev/null | tail -1)
		[ -n "$sid" ] && [ "$(agentrt-session log "$sid" 2>/dev/null |
		    jq -s '[.[] | select(.payload.type == "tool.call.dispatched")] | length')" -ge 1 ] && break
		sleep 0.02
	done
	# While its ring lives, the session is not ours to cancel.
	run agentrt-session cancel "$sid"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$sid"* ]] || fail "$output"
	kill -9 "$(cat "$p")"
	wait || true
	run agentrt-session cancel "$sid"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type == "turn.completed") | .error]')" '["cancelled"]'
	assert_eq "$(log_of '[.[].payload | select(.type == "call.voided")] | length')" 1
	assert_eq "$(agentrt-session show "$sid" | jq -c '[.status, (.open | length)]')" '["idle",0]'
	# Cancelling an idle session records nothing; the next turn runs.
	seq=$(agentrt-session show "$sid" | jq .last_seq)
	run agentrt-session cancel "$sid"
	[ "$status" -eq 0 ]
	assert_eq "$(agentrt-session show "$sid" | jq .last_seq)" "$seq"
	ring -s "$sid" -m again
	[ "$status" -eq 0 ] || fail "$output"
	run agentrt-session cancel no-such-session
	[ "$status" -eq 1 ]
	[[ "$output" == *"no session 'no-such-session'"* ]]
}

@test "a session made with new starts with its agent on its first run" {
	sid=$(AGENTRT_AGENTS="$AGENTS" agentrt-session new -a calc)
	ring -s "$sid" -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type == "completion") | .text')" '"17*23 = 391"'
	assert_eq "$(log_of '[.[].payload | select(.type == "decision.queued") | .trigger.type][0]')" session.start
	# The next run does not start it again.
	ring -s "$sid" -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type == "decision.queued" and .trigger.type == "session.start")] | length')" 1
}

@test "a turn whose --events writes fail exits 1, saying so; the store has it whole" {
	EVENTS=/dev/full ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == *"--events: a write failed: write: No space left on device; no more events are written"* ]] ||
	    fail "$output"
	[[ "$output" == *"the turn completed, but --events lost events"* ]] || fail "$output"
	assert_eq "$(agentrt-session ls | jq -r .status)" idle
	assert_eq "$(agentrt-session log "$(agentrt-session ls -q)" |
	    jq -r 'select(.payload.type == "turn.completed") | .payload.data')" "17*23 = 391"
}

@test "a part the model's format cannot carry fails the turn, naming the part and the model" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "anthropic/claude-3-5-haiku-latest"}' >"$BATS_TEST_TMPDIR/agents/an.json"
	# Refused before anything is sent: no server is needed, nor a key that works.
	ANTHROPIC_API_KEY=dummy-not-a-key ANTHROPIC_BASE_URL=http://127.0.0.1:9 \
	    AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a an --input \
	    '{"type":"client.message","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"video_url","video_url":{"url":"https://example.invalid/v.mp4"}}]}}'
	# Not parked (a resume could only repeat it): failed, exit 1.
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ $output == *"turn failed (provider_error): messages[0].content[1]: part type 'video_url' has no Anthropic equivalent (model anthropic/claude-3-5-haiku-latest)"* ]] ||
	    fail "$output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c .interrupts)" '{}'
}
