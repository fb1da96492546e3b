#!/usr/bin/env bats
# The seed protocol's shapes where agentrt once slipped (issue 19).

load lib

# --- ClientContext.tools --------------------------------------------------

@test "a tool the client registers in client.messages reaches the model and the client" {
	tools='[{"name": "pick_color", "description": "the page asks its user",
	    "input": {"type": "object"}}]'
	ring -a client-tools --input "$(jq -nc --argjson t "$tools" \
	    '{type: "client.messages", agent_id: "client-tools",
	      messages: [{role: "user", content: "pick one"}], client: {tools: $t}}')"
	[ "$status" -eq 3 ] || fail "expected to park on the client tool (3), got $status: $output"
	# The model call was offered the client's tool.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")][0].request.tools | map(.name)')" \
	    '["pick_color"]'
	# Its call is announced to the client and left for it to settle.
	call=$(events 'select(.type=="tool_call") | .id' | jq -r .)
	assert_eq "$(events 'select(.type=="tool_call") | [.name, .handler]')" '["pick_color","client"]'
	assert_eq "$(log_of '[.[].payload.type | select(startswith("tool.call."))] | join(" ")')" \
	    'tool.call.requested tool.call.dispatched'
	ring -s "$(the_session)" --input "$(jq -nc --arg id "$call" \
	    '{type: "tool.result", id: $id, result: "blue"}')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"the page picked blue"'
}

@test "a client tool never takes the name of a declared tool" {
	tools='[{"name": "calc", "description": "a page calculator"}]'
	ring -a calc --input "$(jq -nc --argjson t "$tools" \
	    '{type: "client.messages", agent_id: "calc",
	      messages: [{role: "user", content: "What is 17*23?"}], client: {tools: $t}}')"
	[ "$status" -eq 0 ] || fail "$output"
	# The worker tool ran it.
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	assert_eq "$(log_of '[.[].payload | select(.type=="agent.updated")] | length')" 1
}

# --- detail -------------------------------------------------------------

@test "an llm.error's detail is recorded and reaches the worker in llm.finished" {
	# The worker fails the model call with a provider's status and body,
	# then ends the turn with what llm.finished told it.
	DECIDE_EXEC='jq -c --unbuffered '\''
	    if .trigger.type == "llm.execute" then
	      {actions: [{type: "llm.error", error: "HTTP 400", retryable: false,
	        code: "provider_error",
	        detail: {status: 400, body: "{\"error\":{\"type\":\"invalid_request_error\"}}"}}]}
	    elif .trigger.type == "llm.finished" then
	      {actions: [{type: "done", data: "\(.trigger.detail.status) \(.trigger.detail.body | fromjson | .error.type)"}]}
	    else .proposed end'\'
	export DECIDE_EXEC
	ring_exec -a worker-llm -m hello
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.errored") | .detail.status]')" '[400]'
	assert_eq "$(events 'select(.type=="completion") | .text')" '"400 invalid_request_error"'
	# The client's error event says it too, in the runtime API's names.
	assert_eq "$(events 'select(.type=="error") | [.code, .retrying, .retryable, .detail.status]')" \
	    '["provider_error",false,false,400]'
}

@test "a tool.error's detail is recorded with the error" {
	DECIDE_EXEC='jq -c --unbuffered '\''
	    if .trigger.type == "tool.execute" then
	      {actions: [{type: "tool.error", error: "calc: HTTP 503", retryable: false,
	        detail: {status: 503, retry: "later"}}]}
	    else .proposed end'\'
	export DECIDE_EXEC
	ring_exec -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.errored") | .detail]')" \
	    '[{"status":503,"retry":"later"}]'
	# A failure that ends the call is its tool_result, detail and all.
	assert_eq "$(events 'select(.type=="tool_result") | [.error, .detail]')" \
	    '["calc: HTTP 503",{"status":503,"retry":"later"}]'
}

@test "a turn's cost is the exact sum of its calls' costs, no place rounded away" {
	# Two model calls, each costing 0.00000255 dollars, as the worker says.
	DECIDE_EXEC='jq -c --unbuffered '\''
	    if .trigger.type == "llm.execute" then
	      {actions: [{type: "llm.result", response: {model: "mock/echo", content: "hi",
	        usage: {input: 3, output: 1, total: 4}, cost: "0.00000255"}}]}
	    elif .trigger.type == "llm.finished" and ([.messages[] | select(.role == "assistant")] | length) < 1
	    then .proposed | .actions = [{type: "llm.call"}]
	    elif .trigger.type == "llm.finished" then .proposed | .actions = [{type: "done", data: "two calls"}]
	    else .proposed end'\'
	export DECIDE_EXEC
	ring_exec -a worker-llm -m hello
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.completed")] | length')" 2
	assert_eq "$(events 'select(.type=="completion") | [.text, .cost]')" '["two calls","0.0000051"]'
}

@test "a client.action with only the standard agent is an error saying it needs a worker, not a missing stage" {
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	: >"$EVENTS"
	ring -s "$(the_session)" --input '{"type": "client.action", "agent_id": "calc", "name": "poke"}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type == "error") | [.code, .retrying]')" '["decision_error",false]'
	[[ "$(events 'select(.type == "error") | .message')" == *"a client.action ('poke') needs a worker or a jq program to answer it (agentrt-decide --exec, --url or --jq)"* ]] ||
	    fail "$(cat "$EVENTS")"
	! grep -q 'no agentrt-decide in the ring' "$EVENTS" || fail "$(cat "$EVENTS")"
}

@test "a client.action's turn_id reaches the worker's request" {
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	export CAP=$BATS_TEST_TMPDIR/requests.ndjson
	DECIDE_EXEC='sh -c '\''tee -a "$CAP" | jq -c --unbuffered "if .trigger.type == \"client.action\" then {actions: [{type: \"done\", data: \"poked\"}]} else .proposed end"'\'
	export DECIDE_EXEC
	ring_exec -s "$(the_session)" --input '{"type": "client.action", "agent_id": "calc", "name": "poke", "turn_id": "run-7"}'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c 'select(.trigger.type == "client.action") | [.trigger.name, .turn_id]' "$CAP")" '["poke","run-7"]'
}

@test "message.send into a session made by new that never ran starts it first" {
	target=$(AGENTRT_AGENTS="$AGENTS" agentrt-session new -a calc)
	[ -n "$target" ] || fail "new printed no id"
	export TARGET=$target
	DECIDE_EXEC='jq -c --unbuffered --arg t "$TARGET" '\''
	    if .agent_id == "echo" and .trigger.type == "client.messages" then
	      .proposed | .actions = [{type: "message.send", session_id: $t,
	        message: {role: "user", content: "What is 17*23?"}}, {type: "done", data: "sent"}]
	    elif .trigger.type == "tool.execute" then null
	    else .proposed end'\'
	export DECIDE_EXEC
	ring_exec -a echo -m go
	[ "$status" -eq 0 ] || fail "$output"
	# The target ran its session.start, then the turn the message began.
	assert_eq "$(agentrt-session log "$target" | jq -c '[.payload | select(.type == "decision.queued") | .trigger.type]' | jq -s -c add)" \
	    '["session.start","client.message","llm.finished","tool.execute","tool.finished","llm.finished"]'
	assert_eq "$(agentrt-session log "$target" | jq -r 'select(.payload.type == "turn.completed") | .payload.data')" "17*23 = 391"
}

# --- RetryPolicy is whole --------------------------------------------------

@test "an agent file whose retry lacks a member is refused at load, naming it" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "mock/echo", "retry": {"max_retries": 1,
	    "backoff_base_secs": 0, "backoff_max_secs": 0}}' >"$BATS_TEST_TMPDIR/agents/part.json"
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -a part -m hi
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == *"part.json': retry: missing member 'timeout_secs'"* ]] || fail "$output"
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
}

@test "a decision's action whose retry lacks a member fails the decision, naming it" {
	DECIDE_EXEC='jq -c --unbuffered '\''if .trigger.type == "client.messages"
	    then .proposed | .actions[0].retry = {timeout_secs: 5, max_retries: 1, backoff_base_secs: 0}
	    else .proposed end'\'
	export DECIDE_EXEC
	ring_exec -a echo -m hi
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="error" and .code=="bad_response") | .message')" \
	    "\"retry: missing member 'backoff_max_secs' (a RetryPolicy has all four of timeout_secs, max_retries, backoff_base_secs and backoff_max_secs)\""
	assert_eq "$(log_of '[.[].payload.type | select(. == "llm.call.requested")] | length')" 0
}

# --- ClientInput.agent_id -------------------------------------------------

@test "a client.message for another agent than the session's is refused, nothing recorded" {
	ring -a echo -m first
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(the_session)
	before=$(agentrt-session log "$sid" | wc -l)
	ring -s "$sid" --input '{"type": "client.message", "agent_id": "calc", "message": {"role": "user", "content": "What is 17*23?"}}'
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[[ "$output" == *"client.message is for agent 'calc', not this session's agent 'echo'"* ]] || fail "$output"
	assert_eq "$(agentrt-session log "$sid" | wc -l)" "$before"
	# The one addressed to its own agent runs.
	ring -s "$sid" --input '{"type": "client.message", "agent_id": "echo", "message": {"role": "user", "content": "second"}}'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" '"second"'
}

@test "a new session's first input must be for the agent -a names; no session is made" {
	run bash -c 'agentrt-session run --agents "$top_srcdir/tests/fixtures/agents" -a echo \
	    --input "{\"type\": \"client.messages\", \"agent_id\": \"calc\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}" \
	    </dev/null >"$BATS_TEST_TMPDIR/out"'
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[[ "$output" == *"--input: client.messages is for agent 'calc'"* ]] || fail "$output"
	assert_eq "$(jq -c 'select(.type=="error") | [.code, .message]' "$BATS_TEST_TMPDIR/out")" \
	    "[\"agent_mismatch\",\"client.messages is for agent 'calc', not this session's agent 'echo'\"]"
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
}

@test "a client input for another agent arriving on the ring is an error line, and not taken" {
	# A front-end's line for the calc agent comes round the echo ring.
	cat >"$BATS_TEST_TMPDIR/inject.sh" <<-'SH'
	#!/bin/sh
	echo '{"type":"client.action","agent_id":"calc","name":"poke"}'
	exec cat
	SH
	chmod +x "$BATS_TEST_TMPDIR/inject.sh"
	INJECT="$BATS_TEST_TMPDIR/inject.sh" ring -a echo -m first
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="error") | [.code, .message]')" \
	    "[\"agent_mismatch\",\"client.action is for agent 'calc', not this session's agent 'echo'\"]"
	assert_eq "$(log_of '[.[].payload | select(.type=="decision.queued") | .trigger.type] | join(" ")')" \
	    'session.start client.message llm.finished'
}

@test "a client message's stream streams that turn, whatever the config says" {
	# echo does not stream; the client asks it to.
	ring -a echo --input '{"type":"client.message","message":{"role":"user","content":"hello there"},"stream":true}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(log_of '[.[].payload | select(.type == "llm.call.requested") | .stream]')" '[true]'
	assert_eq "$(events 'select(.type == "token") | .text' | paste -sd' ')" '"hello " "there"'
	# The next turn, not asked, is as the config says.
	ring -s "$(the_session)" -m again
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(log_of '[.[].payload | select(.type == "llm.call.requested") | .stream]')" '[true,false]'
	# stream.json streams; a client that says false turns it off.
	: >"$EVENTS"
	ring -a stream --input '{"type":"client.message","message":{"role":"user","content":"hi"},"stream":false}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(log_of '[.[].payload | select(.type == "llm.call.requested") | .stream]')" '[false]'
	assert_eq "$(events 'select(.type == "token")' | wc -l)" 0
}

@test "a status says what it is on: the model or the tool, the call and its attempt" {
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type == "status" and .status != "complete") | [.status, .detail, .attempt, (.call_id | type)]' | paste -sd' ')" \
	    '["thinking","model mock/script",1,"string"] ["acting","tool calc",1,"string"] ["thinking","model mock/script",1,"string"]'
}
