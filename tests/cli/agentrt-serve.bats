#!/usr/bin/env bats
# agentrt-serve: AG-UI runs over HTTP, the page, and what it refuses.
# Every run is a real ring of the real binaries on the offline mock; the
# HTTP client is curl.  The AG-UI clients nobody here wrote (@ag-ui/core,
# @ag-ui/client, Chromium) are in tests/e2e/agui-serve.bats.

load lib
load serve

teardown() {
	serve_stop
}

@test "a run: RUN_STARTED with the request's ids, the tool's result, the answer, RUN_FINISHED" {
	serve_start
	run post calc "$(input th-1 run-1 'What is 17*23?')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc '.[0] | [.type, .threadId, .runId]' <<<"$output")" \
	    '["RUN_STARTED","th-1","run-1"]'
	assert_eq "$(jq -sc '.[-1] | [.type, .threadId, .runId]' <<<"$output")" \
	    '["RUN_FINISHED","th-1","run-1"]'
	assert_eq "$(jq -sc 'map(select(.type == "TOOL_CALL_RESULT") | .content)' <<<"$output")" '["391"]'
	assert_eq "$(jq -sj 'map(select(.type == "TEXT_MESSAGE_CONTENT") | .delta) | add' <<<"$output")" \
	    '17*23 = 391'
	# The thread is the session, in the store the ring shares.
	assert_eq "$(agentrt-session show th-1 | jq -r .turn_status)" completed
	# And the server said so on its stdout, one line a run.
	assert_eq "$(jq -sc 'map(select(.type == "run")) | map([.agent, .thread_id, .run_id, .outcome])' \
	    "$BATS_TEST_TMPDIR/serve.out")" '[["calc","th-1","run-1","success"]]'
}

@test "GET /threads/ID is the session's path as AG-UI messages, and its branches" {
	serve_start
	post calc "$(input th-2 run-1 'What is 17*23?')" >/dev/null
	run curl -sf "${url}threads/th-2"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c '[.threadId, (.messages | map(.role)), (.messages[1].toolCalls[0].function.name), .messages[2].toolCallId != null, (.branches | length)]' <<<"$output")" \
	    '["th-2",["user","assistant","tool","assistant"],"calc",true,1]'
	run curl -s -o /dev/null -w '%{http_code}' "${url}threads/nosuch"
	assert_eq "$output" 404
}

@test "a client tool ends the run; the next run's view carries the result and the turn goes on" {
	serve_start
	tools='[{"name": "pick_color", "description": "the page asks its user",
	    "parameters": {"type": "object"}}]'
	run post client-tools "$(input th-3 run-1 'pick one' "$tools")"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc 'map(select(.type == "TOOL_CALL_START") | .toolCallName)' <<<"$output")" '["pick_color"]'
	call=$(jq -sr 'map(select(.type == "TOOL_CALL_START"))[0].toolCallId' <<<"$output")
	# A completed run, with the call left for the client (AG-UI 1.0).
	assert_eq "$(jq -sc --arg c "$call" '.[-1] | [.type, .runId, .outcome == {type: "success", pendingToolCallIds: [$c]}]' <<<"$output")" \
	    '["RUN_FINISHED","run-1",true]'
	parent=$(jq -sr 'map(select(.type == "TOOL_CALL_START"))[0].parentMessageId' <<<"$output")
	assert_eq "$(jq -sc 'map(select(.type == "run")) | .[-1].outcome' \
	    "$BATS_TEST_TMPDIR/serve.out")" '"interrupt"'
	# The client answers: its view, with the call and the tool's message.
	body=$(jq -nc --arg c "$call" --arg p "$parent" --argjson tools "$tools" \
	    '{threadId: "th-3", runId: "run-2", tools: $tools, messages: [
	      {id: "run-1-u", role: "user", content: "pick one"},
	      {id: $p, role: "assistant", toolCalls: [{id: $c, type: "function",
	        function: {name: "pick_color", arguments: "{}"}}]},
	      {id: "t-1", role: "tool", toolCallId: $c, content: "blue"}]}')
	run post client-tools "$body"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc '.[0] | [.type, .runId]' <<<"$output")" '["RUN_STARTED","run-2"]'
	assert_eq "$(jq -sj 'map(select(.type == "TEXT_MESSAGE_CONTENT") | .delta) | add' <<<"$output")" \
	    'the page picked blue'
	assert_eq "$(jq -sc '.[-1].type' <<<"$output")" '"RUN_FINISHED"'
}

@test "an approval parks the run on an interrupt; the next run's resume answers it" {
	serve_start
	run post guarded "$(input th-4 run-1 'six times seven')"
	[ "$status" -eq 0 ] || fail "$output"
	it=$(jq -sc 'map(select(.type == "CUSTOM" and .name == "agentrt.interrupt"))[0].value' <<<"$output")
	iid=$(jq -r .interrupt_id <<<"$it")
	[ -n "$iid" ] && [ "$iid" != null ] || fail "no interrupt: $output"
	assert_eq "$(jq -c '.payload.tool_name' <<<"$it")" '"calc"'
	assert_eq "$(jq -sc --arg i "$iid" '.[-1] | [.type, .outcome.type, (.outcome.interrupts | map(.id) == [$i])]' <<<"$output")" \
	    '["RUN_FINISHED","interrupt",true]'
	body=$(jq -nc --arg i "$iid" '{threadId: "th-4", runId: "run-2", messages: [],
	    resume: [{interruptId: $i, status: "resolved", payload: {approved: true}}]}')
	run post guarded "$body"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc 'map(select(.type == "TOOL_CALL_RESULT") | .content)' <<<"$output")" '["42"]'
	assert_eq "$(jq -sj 'map(select(.type == "TEXT_MESSAGE_CONTENT") | .delta) | add' <<<"$output")" \
	    'calc said: 42'
	assert_eq "$(jq -sc '.[-1] | [.type, .runId]' <<<"$output")" '["RUN_FINISHED","run-2"]'
}

@test "a run that fails ends in RUN_ERROR" {
	serve_start
	# lim-loops: its model asks for more calls than max_loops allows.
	run post lim-loops "$(input th-5 run-1 'hello')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc '.[0].type' <<<"$output")" '"RUN_STARTED"'
	assert_eq "$(jq -sc '.[-1].type' <<<"$output")" '"RUN_ERROR"'
	[ -n "$(jq -sr '.[-1].message' <<<"$output")" ]
	[ "$(jq -sc 'map(select(.type == "RUN_FINISHED")) | length' <<<"$output")" -eq 0 ]
}

@test "GET / is the page, one file that loads nothing from elsewhere" {
	serve_start
	run curl -sf -D "$BATS_TEST_TMPDIR/h" "$url"
	[ "$status" -eq 0 ]
	grep -qi '^content-type: text/html' "$BATS_TEST_TMPDIR/h"
	[[ $output == *'<title>agentrt</title>'* ]]
	# Byte for byte the file in the tree.
	assert_eq "$output" "$(cat "$top_srcdir/cmd/serve-page.html")"
	! grep -Eq '(src|href)="(https?:)?//' <<<"$output"
	run curl -sf "${url}agents"
	jq -e '.agents | index("calc") and index("client-tools")' <<<"$output" >/dev/null
}

@test "bad requests get a status and a one-line reason, and nothing runs" {
	serve_start --max-body 2K
	code() { curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' "$@"; }
	assert_eq "$(code -d 'not json' "${url}agents/calc")" 400
	jq -e '.error.code == "bad_input"' "$BATS_TEST_TMPDIR/body" >/dev/null
	assert_eq "$(code -d '[1]' "${url}agents/calc")" 400
	assert_eq "$(code -d '{"runId": "r", "messages": []}' "${url}agents/calc")" 400
	grep -q threadId "$BATS_TEST_TMPDIR/body"
	assert_eq "$(code -d '{"threadId": "a b", "runId": "r", "messages": []}' "${url}agents/calc")" 400
	assert_eq "$(code -d '{"threadId": "t", "runId": "r", "messages": {}}' "${url}agents/calc")" 400
	grep -q 'messages must be an array' "$BATS_TEST_TMPDIR/body"
	assert_eq "$(code -d '{"threadId": "t", "runId": "r", "messages": [1]}' "${url}agents/calc")" 400
	assert_eq "$(code -d '{"threadId": "t", "runId": "r", "messages": [], "tools": 3}' "${url}agents/calc")" 400
	assert_eq "$(code -d '{"threadId": "t", "runId": "r", "messages": [], "resume": [{"interruptId": "i"}]}' "${url}agents/calc")" 400
	grep -q 'resolved or cancelled' "$BATS_TEST_TMPDIR/body"
	assert_eq "$(code -d '{"threadId": "t", "runId": "r", "messages": [], "resume": [{"interruptId": "i", "status": "resolved"}, {"interruptId": "j", "status": "resolved"}]}' "${url}agents/calc")" 400
	assert_eq "$(code -d '{"threadId": "t", "runId": "r", "messages": [], "state": {"n": 1e400}}' "${url}agents/calc")" 400
	grep -q 'the number at /state/n (1e400) is out of range' "$BATS_TEST_TMPDIR/body"
	big=$(head -c 4000 /dev/zero | tr '\0' x)
	assert_eq "$(code -d "{\"threadId\": \"$big\"}" "${url}agents/calc")" 413
	assert_eq "$(code "${url}agents/calc")" 405
	assert_eq "$(code "${url}nowhere")" 404
	assert_eq "$(code -X DELETE "$url")" 405
	assert_eq "$(code --path-as-is -d "$(input t r hi)" "${url}agents/..")" 404
	# Each said on stderr, one line each; no run was started.
	assert_eq "$(grep -c ': 4[01][0-9] ' "$BATS_TEST_TMPDIR/serve.err")" 15
	! grep -q '"type":"run"' "$BATS_TEST_TMPDIR/serve.out"
	agentrt-session ls -q | { ! grep -q .; }
}

@test "an agent that is not there is a RUN_ERROR naming it" {
	serve_start
	run post nosuch "$(input th-6 run-1 hi)"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -sc '[.[0].type, .[-1].type]' <<<"$output")" '["RUN_STARTED","RUN_ERROR"]'
}

@test "a client that disconnects cancels its run; the thread takes the next one" {
	serve_start
	# The sleepy agent's model takes 8 s; its client goes once the run
	# has started.  (The server sees the socket close; a generous bound,
	# as an ASan build on a loaded machine is slow to stop a ring.)
	sleepy_run th-7
	grep -q RUN_STARTED "$BATS_TEST_TMPDIR/first" || fail "no RUN_STARTED in 5 s"
	kill "$sleepy_pid"
	wait "$sleepy_pid" || true
	for i in $(seq 1 300); do
		grep -q '"outcome":"cancelled"' "$BATS_TEST_TMPDIR/serve.out" && break
		sleep 0.1
	done
	assert_eq "$(jq -sc 'map(select(.type == "run"))[0] | [.run_id, .outcome]' \
	    "$BATS_TEST_TMPDIR/serve.out")" '["run-1","cancelled"]'
	# The one engine serves on: the cancel stopped the turn, not it.
	assert_eq "$(engines | wc -l)" 1
	# The turn was cancelled, as a stopped agentrt-session run does.
	agentrt-session log th-7 | grep -q '"cancelled'
	# The thread is free: its next run is taken, and finishes.
	echo '{"model": "mock/script", "mock": {"script": [{"content": "awake"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/sleepy.json"
	post sleepy "$(input th-7 run-2 again)" >"$BATS_TEST_TMPDIR/next"
	assert_eq "$(jq -sc '[first.type, first.runId, last.type]' "$BATS_TEST_TMPDIR/next")" \
	    '["RUN_STARTED","run-2","RUN_FINISHED"]'
}

@test "one engine drives every run; a run cancelled or failed touches no other" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "mock/script", "mock": {"script":
	    [{"delay_ms": 2500, "content": "slow and done"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/slow.json"
	serve_start
	engine=$(engines)
	[ -n "$engine" ] || fail "no engine: $(cat "$BATS_TEST_TMPDIR/serve.err")"
	# Its ring is the server's children: four stages, one of them it.
	assert_eq "$(pgrep -P "$serve_pid" | wc -l)" 4
	# A slow run, and while it goes: a client that leaves, a run that
	# fails, and runs that finish, on threads of their own.
	command curl -sN --max-time 30 -d "$(input th-s1 run-1 hi)" \
	    "${url}agents/slow" >"$BATS_TEST_TMPDIR/slow" 2>/dev/null 3>&- &
	slow=$!
	sleepy_run th-s2
	kill "$sleepy_pid"
	wait "$sleepy_pid" || true
	post lim-loops "$(input th-s3 run-1 hello)" >"$BATS_TEST_TMPDIR/failed"
	calcs=()
	for i in 1 2 3 4 5 6; do
		post calc "$(input "th-c$i" run-1 'What is 17*23?')" >"$BATS_TEST_TMPDIR/calc$i" &
		calcs+=($!)
	done
	wait_pid "$slow" 40 curl
	for i in "${calcs[@]}"; do
		wait_pid "$i" 40 curl
	done
	assert_eq "$(jq -sc '.[-1].type' "$BATS_TEST_TMPDIR/failed")" '"RUN_ERROR"'
	for i in 1 2 3 4 5 6; do
		assert_eq "$(jq -sc '[.[-1].type, .[-1].result]' "$BATS_TEST_TMPDIR/calc$i")" \
		    '["RUN_FINISHED","17*23 = 391"]'
	done
	assert_eq "$(sed -n 's/^data: //p' "$BATS_TEST_TMPDIR/slow" | jq -sc '[.[-1].type, .[-1].result]')" \
	    '["RUN_FINISHED","slow and done"]'
	assert_eq "$(jq -sc 'map(select(.type == "run")) | map(.thread_id + ":" + .outcome) | sort' \
	    "$BATS_TEST_TMPDIR/serve.out")" \
	    '["th-c1:success","th-c2:success","th-c3:success","th-c4:success","th-c5:success","th-c6:success","th-s1:success","th-s2:cancelled","th-s3:error"]'
	# Nine runs, and the same one engine process for all of them.
	assert_eq "$(engines)" "$engine"
	assert_eq "$(pgrep -P "$serve_pid" | wc -l)" 4
}

@test "two runs at once on one thread: the second gets 409" {
	serve_start
	sleepy_run th-8
	run curl -s -o /dev/null -w '%{http_code}' -d "$(input th-8 run-2 hi)" "${url}agents/sleepy"
	assert_eq "$output" 409
	kill "$sleepy_pid" 2>/dev/null || true
	wait_pid "$sleepy_pid" 10 curl
}

@test "a bearer token: required when set, never printed; another address needs one" {
	export SERVE_TOKEN=s3cret-token-value
	serve_start --token-env SERVE_TOKEN
	run curl -s -o /dev/null -w '%{http_code}' "${url}agents"
	assert_eq "$output" 401
	run curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer wrong' "${url}agents"
	assert_eq "$output" 401
	run curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $SERVE_TOKEN" "${url}agents"
	assert_eq "$output" 200
	# The page needs none (it asks for the token itself).
	run curl -s -o /dev/null -w '%{http_code}' "$url"
	assert_eq "$output" 200
	run post calc "$(input th-9 r hi)"
	[[ $output != *RUN_STARTED* ]]
	! grep -rq s3cret "$BATS_TEST_TMPDIR/serve.out" "$BATS_TEST_TMPDIR/serve.err"
	serve_stop
	# Not loopback, no token: refused before it binds.
	run timeout -k 5 20 agentrt-serve --listen 0.0.0.0 --port 0
	[ "$status" -eq 2 ]
	[[ $output == *'--listen 0.0.0.0 is not loopback'*'--token-env'* ]] || fail "$output"
	run timeout -k 5 20 agentrt-serve --token-env NO_SUCH_VAR_HERE --port 0
	[ "$status" -eq 2 ]
	[[ $output == *'$NO_SUCH_VAR_HERE is not set'* ]] || fail "$output"
}

@test "usage errors name what is wrong" {
	run timeout -k 5 20 agentrt-serve --port 70000
	[ "$status" -eq 2 ]
	[[ $output == *"bad --port '70000'"* ]] || fail "$output"
	run timeout -k 5 20 agentrt-serve --listen nowhere
	[ "$status" -eq 2 ]
	[[ $output == *"bad --listen 'nowhere'"* ]] || fail "$output"
	run timeout -k 5 20 agentrt-serve --max-body lots
	[ "$status" -eq 2 ]
	run timeout -k 5 20 agentrt-serve extra
	[ "$status" -eq 2 ]
	[[ $output == *'takes no arguments'* ]] || fail "$output"
	# A port taken: a failure, said.
	serve_start
	port=${url##*:}; port=${port%/}
	run timeout -k 5 20 agentrt-serve --port "$port"
	[ "$status" -eq 1 ]
	[[ $output == *"listen on 127.0.0.1:$port"* ]] || fail "$output"
}

@test "SIGTERM stops the server and the runs going, which are cancelled" {
	serve_start
	sleepy_run th-10
	serve_term 30
	grep -q '"outcome":"cancelled"' "$BATS_TEST_TMPDIR/serve.out"
	# No stage of its ring is left.
	assert_eq "$(engines | wc -l)" 0
}

@test "SIGTERM stops it though whoever started it had SIGTERM blocked" {
	command -v python3 >/dev/null || skip "no python3"
	# A blocked signal stays blocked across exec: the server unblocks
	# the ones it lives by.
	serve_wrap="python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK,
    {signal.SIGTERM, signal.SIGINT, signal.SIGCHLD})
os.execvp(sys.argv[1], sys.argv[1:])'"
	# (exec: the background job's pid is then the server's own)
	eval "serve_wrap_start() { exec $serve_wrap \"\$@\"; }"
	serve_wrap=serve_wrap_start
	serve_start
	grep -q '^SigBlk:	0*$' "/proc/$serve_pid/status" ||
	    fail "$(grep Sig "/proc/$serve_pid/status")"
	sleepy_run th-13
	serve_term 20
	grep -q '"outcome":"cancelled"' "$BATS_TEST_TMPDIR/serve.out"
}

@test "SIGTERM: a ring that does not stop in 5 s is killed, and the server says so" {
	# The server runs the stages beside its own binary: a copy of it
	# beside an agentrt-llm that ignores SIGTERM (an ignored signal
	# stays ignored across exec), the other stages the real ones.
	local bin=$BATS_TEST_TMPDIR/bin p
	mkdir -p "$bin"
	cp "$top_builddir/agentrt-serve" "$bin/"
	for p in agentrt-decide agentrt-tool agentrt-session agentrt-tree; do
		ln -s "$top_builddir/$p" "$bin/$p"
	done
	# What it reads is copied to llm.in: once the model call is there,
	# agentrt-llm has it (tee writes its standard output first), and it
	# finishes a call it has before it exits.  RUN_STARTED alone is too
	# early: stopped before the call reached it, it exits at once.
	printf '#!/bin/sh\ntrap "" TERM\ntee "%s/llm.in" | "%s/agentrt-llm" "$@"\n' \
	    "$BATS_TEST_TMPDIR" "$top_builddir" >"$bin/agentrt-llm"
	chmod +x "$bin/agentrt-llm"
	: >"$BATS_TEST_TMPDIR/llm.in"
	serve_wrap="env PATH=$bin:$PATH"
	serve_start
	# A model of 30 s, not 8: the ring must outlast the 5 s grace.
	echo '{"model": "mock/script", "mock": {"script":
	    [{"delay_ms": 30000, "content": "late"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/sleepy.json"
	sleepy_run th-14
	for p in $(seq 1 100); do
		grep -q '"llm.request"' "$BATS_TEST_TMPDIR/llm.in" && break
		sleep 0.1
	done
	grep -q '"llm.request"' "$BATS_TEST_TMPDIR/llm.in" ||
	    fail "no model call reached agentrt-llm in 10 s"
	serve_term 20
	grep -q "the ring did not stop in 5000 ms: killed" \
	    "$BATS_TEST_TMPDIR/serve.err" || fail "$(cat "$BATS_TEST_TMPDIR/serve.err")"
	grep -q '"outcome":"cancelled"' "$BATS_TEST_TMPDIR/serve.out"
}

@test "a ring that breaks mid-turn: RUN_ERROR, and the run logged as an error" {
	# Its tool stage refuses the --tools that is not there, and exits.
	serve_start --tools "$BATS_TEST_TMPDIR/nonexistent"
	run post calc "$(input th-15 run-1 'What is 17*23?')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc '.[-1] | [.type, .message, .code]' <<<"$output")" \
	    '["RUN_ERROR","the ring closed with the turn in flight","run_failed"]'
	assert_eq "$(jq -sc 'map(select(.type == "run"))[0].outcome' "$BATS_TEST_TMPDIR/serve.out")" '"error"'
}

@test "a thread of another agent: RUN_ERROR says why, as agentrt-session did" {
	serve_start
	post calc "$(input th-11 run-1 'What is 17*23?')" >/dev/null
	run post echo "$(input th-11 run-2 hi)"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -sc '[.[0].type, .[-1].type, .[-1].code]' <<<"$output")" '["RUN_STARTED","RUN_ERROR","agent_mismatch"]'
	assert_eq "$(jq -sr '.[-1].message' <<<"$output")" \
	    "client.messages is for agent 'echo', not this session's agent 'calc'"
	# And on the server's stderr, as the engine's stderr is.
	grep -q "not this session's agent 'calc'" "$BATS_TEST_TMPDIR/serve.err"
}

@test "the same runId again answers the turn recorded, and runs nothing twice" {
	serve_start
	post calc "$(input th-12 run-1 'What is 17*23?')" >/dev/null
	run post calc "$(input th-12 run-1 'What is 17*23?')"
	assert_eq "$(jq -sc '.[-1] | [.type, .result, .runId]' <<<"$output")" '["RUN_FINISHED","17*23 = 391","run-1"]'
	assert_eq "$(agentrt-tree path th-12 | jq -sc 'map(.role)')" '["user","assistant","tool","assistant"]'
	assert_eq "$(agentrt-session log th-12 | jq -s 'map(select(.payload.type == "tool.call.completed")) | length')" 1
}
