# serve.bash - agentrt-serve on a free loopback port, and curl for it
#
# For the tests of agentrt-serve (tests/cli/agentrt-serve.bats) and of the
# AG-UI clients against it (tests/e2e/agui-serve.bats); load after lib.

# Every request a test makes has an end: a server that stops answering
# fails the test instead of holding it for ever.  A --max-time the test
# gives comes later on the line, and wins.
curl() {
	command curl --max-time 60 "$@"
}

# serve_stop: ends the server serve_start started, if it runs, with
# SIGTERM; it must exit 0, within 30 s (a sanitizer's report, a crash, a
# hang, fails the test, with what the server said).
serve_stop() {
	local pid=${serve_pid:-}
	[ -n "$pid" ] || return 0
	serve_pid=
	kill "$pid" 2>/dev/null || true
	wait_pid "$pid" 30 agentrt-serve ||
	    fail "$(tail -40 "$BATS_TEST_TMPDIR/serve.err")" || return 1
	[ "$wait_status" -eq 0 ] ||
	    fail "agentrt-serve exited $wait_status: $(tail -40 "$BATS_TEST_TMPDIR/serve.err")"
}

# serve_start [OPTIONS...]: agentrt-serve on a free port with the test
# agents and tools; sets url (ending in /) and serve_pid; its stdout in
# $BATS_TEST_TMPDIR/serve.out, stderr serve.err.  $serve_wrap, when set,
# is a command that runs it.
serve_start() {
	local i
	# sleepy: a model that takes 8 s, for runs still going when tested.
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "mock/script", "mock": {"script":
	    [{"delay_ms": 8000, "content": "late"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/sleepy.json"
	: >"$BATS_TEST_TMPDIR/serve.out"	# the job opens it when it runs
	$serve_wrap agentrt-serve --port 0 --agents "$BATS_TEST_TMPDIR/agents" \
	    --agents "$fixtures/agents" \
	    --agents "$top_srcdir/examples/agents" \
	    --tools "$top_srcdir/examples/tools" "$@" \
	    >"$BATS_TEST_TMPDIR/serve.out" 2>"$BATS_TEST_TMPDIR/serve.err" 3>&- &
	serve_pid=$!
	for i in $(seq 1 100); do
		url=$(head -1 "$BATS_TEST_TMPDIR/serve.out" | jq -r '.url // empty')
		[ -n "$url" ] && return 0
		sleep 0.1
	done
	fail "agentrt-serve did not listen: $(cat "$BATS_TEST_TMPDIR/serve.err")"
}

# sleepy_run THREAD: a run of the sleepy agent (its model takes 8 s) on
# THREAD in the background, its stream in $BATS_TEST_TMPDIR/first;
# waits (up to 5 s) for its RUN_STARTED.  sleepy_pid is curl's own pid.
sleepy_run() {
	local i
	: >"$BATS_TEST_TMPDIR/first"
	command curl -sN --max-time 20 -d "$(input "$1" run-1 hi)" \
	    "${url}agents/sleepy" >"$BATS_TEST_TMPDIR/first" 2>/dev/null 3>&- &
	sleepy_pid=$!
	for i in $(seq 1 50); do
		grep -q RUN_STARTED "$BATS_TEST_TMPDIR/first" && break
		sleep 0.1
	done
}

# engines: the pids of the engines (agentrt-session serve) of the server
# serve_start started, one a line.
engines() {
	pgrep -f "agentrt-session.* serve --agents $BATS_TEST_TMPDIR/agents" || true
}

# serve_term SECONDS: SIGTERM to the server serve_start started, which
# must exit 0 within SECONDS.
serve_term() {
	local pid=$serve_pid
	serve_pid=
	kill -TERM "$pid"
	wait_pid "$pid" "$1" agentrt-serve
	assert_eq "$wait_status" 0
}

# input THREAD RUN TEXT [TOOLS]: a RunAgentInput of one user message.
input() {
	jq -nc --arg t "$1" --arg r "$2" --arg m "$3" --argjson tools "${4:-[]}" \
	    '{threadId: $t, runId: $r, state: {}, context: [], forwardedProps: {},
	      tools: $tools, messages: [{id: ($r + "-u"), role: "user", content: $m}]}'
}

# post AGENT BODY: the run's events, one JSON a line (the data: lines).
post() {
	curl -sN -H 'Content-Type: application/json' \
	    -d "$2" "${url}agents/$1" | sed -n 's/^data: //p'
}

