#!/usr/bin/env bats
# Mistakes made running a ring, each caught and said on stderr in one line
# with the right exit status: run at a terminal, Ctrl-C, a stage missing,
# a ring that is a plain file, a provider that refuses the request, a
# parked turn, a session another ring drives.

load lib

AGENTS="$top_srcdir/tests/fixtures/agents:$top_srcdir/examples/agents"
export AGENTRT_AGENTS="$AGENTS"

teardown() {
	stop_server
}

# ring STAGES... -- RUN-ARGS...: the stages (a command line each, before
# session run) over a fifo, then agentrt-session run RUN-ARGS >ring.
# Sets status and output (the session's stderr) as run does.
ring() {
	local fifo="$BATS_TEST_TMPDIR/ring" stages=() cmd
	while [ "$1" != -- ]; do
		stages+=("$1")
		shift
	done
	shift
	rm -f "$fifo"
	[ -n "${PLAIN_RING:-}" ] && : >"$fifo" || mkfifo "$fifo"
	cmd="${stages[0]} <\"\$fifo\" 2>>\"\$BATS_TEST_TMPDIR/stages.err\""
	for s in "${stages[@]:1}"; do
		cmd="$cmd | $s 2>>\"\$BATS_TEST_TMPDIR/stages.err\""
	done
	export fifo
	run timeout 60 bash -c "$cmd | agentrt-session run --events \
	    \"\$BATS_TEST_TMPDIR/events.ndjson\" \"\$@\" >\"\$fifo\"" ring "$@"
}

tools="agentrt-tool -t $top_srcdir/examples/tools"

# The one session in the store.
the_session() {
	agentrt-session ls -q | tail -1
}

# pty SCRIPT-LINES -- COMMAND...: COMMAND on a pseudo-terminal.
pty() {
	command -v python3 >/dev/null || skip "no python3"
	run python3 "$top_srcdir/tests/helpers/pty.py" --timeout 20 \
	    --log "$BATS_TEST_TMPDIR/pty.log" - -- "$@"
}

@test "run with stdout at a terminal is refused before anything is recorded" {
	pty agentrt-session run -a calc -m hi <<'EOF'
expect stdout is a terminal, not a ring: run it last in one: mkfifo ring; agentrt-decide <ring \| agentrt-llm \| agentrt-tool \| agentrt-session run \.\.\. >ring \(see agentrt-session\(1\)\)
wait 2
EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session ls -q)" ""
	! grep -q decision.request "$BATS_TEST_TMPDIR/pty.log" || false
}

@test "run with stdin at a terminal is refused too" {
	pty bash -c 'agentrt-session run -a calc -m hi >"$1"' _ \
	    "$BATS_TEST_TMPDIR/out" <<'EOF'
expect agentrt-session: stdin is a terminal, not a ring
wait 2
EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session ls -q)" ""
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

@test "Ctrl-C during a turn cancels it: it is not left running" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/script","mock":{"script":[{"delay_ms":30000,"content":"late"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/sleepy.json"
	mkfifo "$BATS_TEST_TMPDIR/ring"
	# The shell that starts the ring lives on to give its status; the
	# ring's stages take Ctrl-C as they would at a prompt.
	pty bash -c 'trap "true" INT
	    agentrt-decide <"$1" | agentrt-llm | agentrt-tool |
	    agentrt-session run -v --agents "$2" -a sleepy -m go >"$1"' _ \
	    "$BATS_TEST_TMPDIR/ring" "$BATS_TEST_TMPDIR/agents" <<'EOF'
expect agentrt-session: session [0-9a-f-]+
sendnow \x03
expect agentrt-session: interrupted \(SIGINT\): the turn of session '[0-9a-f-]+' is cancelled
wait 1
EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.status, .turn_status]')" \
	    '["idle","failed"]'
	assert_eq "$(agentrt-session log "$(the_session)" | jq -r 'select(.payload.type == "turn.completed") | .payload.error')" \
	    cancelled
}

@test "SIGTERM ends a run the same way" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/script","mock":{"script":[{"delay_ms":30000,"content":"late"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/sleepy.json"
	mkfifo "$BATS_TEST_TMPDIR/in"
	agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s t -a sleepy \
	    -m go <"$BATS_TEST_TMPDIR/in" >/dev/null 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	exec 4>"$BATS_TEST_TMPDIR/in"	# the ring stays open: it is in flight
	for i in $(seq 1 200); do
		[ "$(agentrt-session show t 2>/dev/null | jq -r .turn_status)" = running ] && break
		sleep 0.05
	done
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	exec 4>&-
	assert_eq "$st" 1
	grep -q "^agentrt-session: interrupted (SIGTERM): the turn of session 't' is cancelled$" \
	    "$BATS_TEST_TMPDIR/err" || fail "$(cat "$BATS_TEST_TMPDIR/err")"
	assert_eq "$(agentrt-session show t | jq -r .turn_status)" failed
}

@test "a ring with no agentrt-llm fails the turn and says so" {
	ring agentrt-decide "$tools" -- -a calc -m '17*23'
	[ "$status" -eq 1 ] || fail "$output"
	[[ "${lines[0]}" =~ ^agentrt-session:\ no\ agentrt-llm\ in\ the\ ring:\ the\ llm\.request\ for\ call\ [0-9a-f-]+\ came\ back\ unanswered$ ]] ||
	    fail "$output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" failed
	assert_eq "$(jq -r 'select(.type == "completion") | .code' "$BATS_TEST_TMPDIR/events.ndjson")" no_stage
}

@test "a ring with no agentrt-decide fails the turn and says so" {
	ring cat agentrt-llm "$tools" -- -a calc -m '17*23'
	[ "$status" -eq 1 ] || fail "$output"
	[[ "${lines[0]}" =~ ^agentrt-session:\ no\ agentrt-decide\ in\ the\ ring:\ the\ decision\.request\ [0-9a-f-]+\ \(trigger\ session\.start\)\ came\ back\ unanswered$ ]] ||
	    fail "$output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" failed
}

@test "a ring with no agentrt-tool fails the turn: the model reads no made-up result" {
	ring agentrt-decide agentrt-llm -- -a calc -m '17*23'
	[ "$status" -eq 1 ] || fail "$output"
	[[ "${lines[0]}" =~ ^agentrt-session:\ no\ agentrt-tool\ in\ the\ ring:\ the\ decision\.request\ for\ tool\ call\ [^\ ]+\ \(\'calc\'\)\ came\ back\ unanswered$ ]] ||
	    fail "$output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" failed
	# One model call only, and no tool message was ever written.
	assert_eq "$(agentrt-session log "$(the_session)" | jq -s '[.[] | select(.payload.type == "llm.call.requested")] | length')" 1
	assert_eq "$(agentrt-session log "$(the_session)" | jq -s '[.[] | select(.payload.type == "message.new" and .payload.message.role == "tool")] | length')" 0
	assert_eq "$(jq -c 'select(.type == "completion") | .text' "$BATS_TEST_TMPDIR/events.ndjson")" null
}

@test "a ring that is a regular file, not a fifo, is named" {
	PLAIN_RING=1 ring agentrt-decide agentrt-llm "$tools" -- -a calc -m '17*23'
	[ "$status" -eq 1 ] || fail "$output"
	[[ "$output" == *"agentrt-session: the ring is a regular file, not a fifo: rm ring && mkfifo ring, then run again with -s $(the_session) to resume"* ]] ||
	    fail "$output"
}

# http_ring CODE: calc's model an openai one at the server's status/CODE.
http_ring() {
	start_server
	OPENAI_BASE_URL="$srv/status/$1/v1" OPENAI_API_KEY=sk-test-not-a-key \
	    ring agentrt-decide agentrt-llm agentrt-tool -- -a "${2:-http-openai}" -m hi
}

@test "a request the provider refuses (401, 403, 400, 404) fails the turn with its words" {
	for code in 401 403 400 404; do
		rm -rf "$AGENTRT_DB" "$BATS_TEST_TMPDIR/events.ndjson"
		http_ring "$code"
		stop_server
		[ "$status" -eq 1 ] || fail "$code: exit $status: $output"
		assert_eq "${lines[0]}" \
		    "agentrt-session: turn failed (provider_error): openai $code: scripted $code"
		assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.turn_status, (.interrupts | length)]')" \
		    '["failed",0]'
	done
	! grep -rq sk-test-not-a-key "$AGENTRT_DB" "$BATS_TEST_TMPDIR/events.ndjson" \
	    "$BATS_TEST_TMPDIR/stages.err" || false
}

@test "a failure a retry may fix (503) still retries, then parks" {
	http_ring 503 http-retry
	[ "$status" -eq 3 ] || fail "exit $status: $output"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" running
	# Its error events name it as agentrt-llm and the log do.
	assert_eq "$(jq -c 'select(.type == "error") | [.code, .retrying]' "$BATS_TEST_TMPDIR/events.ndjson" | sort -u | paste -sd' ')" \
	    '["provider_error",false] ["provider_error",true]'
	# A 503 is one to try again, whether or not this turn still does.
	assert_eq "$(jq -c 'select(.type == "error") | .retryable' "$BATS_TEST_TMPDIR/events.ndjson" | sort -u)" true
}

@test "a parked run prints the command that resumes it, and that command works" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	cat >"$BATS_TEST_TMPDIR/agents/guarded.json" <<'EOF'
{"model": "mock/script",
 "tools": [{"name": "calc", "description": "Evaluate an expression",
            "requires_approval": true}],
 "mock": {"script": [
   {"tool_calls": [{"name": "calc", "arguments": {"expr": "6*7"}}]},
   {"content": "calc said: {{tool}}"}]}}
EOF
	export AGENTRT_AGENTS="$BATS_TEST_TMPDIR/agents"
	ring agentrt-decide agentrt-llm "$tools" -- -a guarded -m go
	[ "$status" -eq 3 ] || fail "$output"
	id=$(the_session)
	iid=$(agentrt-session show "$id" | jq -r '.interrupts | keys[0]')
	assert_eq "${lines[0]}" "agentrt-session: session '$id' is parked on interrupt $iid (approval required: calc): resume it with agentrt-session run -s $id --resume $iid --payload '{\"approved\":true}' >ring"
	ring agentrt-decide agentrt-llm "$tools" -- -s "$id" --resume "$iid" \
	    --payload '{"approved":true}'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -r 'select(.type == "completion") | .text' "$BATS_TEST_TMPDIR/events.ndjson")" \
	    "calc said: 42"
}

@test "a parked failed model call: the resume command takes no payload" {
	ring agentrt-decide agentrt-llm agentrt-tool -- -a model-down -m go
	[ "$status" -eq 3 ] || fail "$output"
	id=$(the_session)
	iid=$(agentrt-session show "$id" | jq -r '.interrupts | keys[0]')
	assert_eq "${lines[0]}" "agentrt-session: session '$id' is parked on interrupt $iid (llm call failed: overloaded): resume it with agentrt-session run -s $id --resume $iid >ring"
}

@test "-s X -a AGENT on a session another ring drives names that process" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	mkfifo "$BATS_TEST_TMPDIR/in"
	agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s x -a e \
	    <"$BATS_TEST_TMPDIR/in" >/dev/null 2>&1 3>&- &
	pid=$!
	exec 4>"$BATS_TEST_TMPDIR/in"
	for i in $(seq 1 200); do
		agentrt-session show x >/dev/null 2>&1 && break
		sleep 0.05
	done
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s x -a e </dev/null
	exec 4>&-
	wait "$pid" || true
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: session 'x' is driven by process $pid"
}

@test "a run of an idle session given nothing to send says it reads nothing" {
	ring agentrt-decide agentrt-llm "$tools" -- -a calc -m 'What is 2*3?'
	[ "$status" -eq 0 ] || fail "first turn: $status: $output"
	sid=$(the_session)
	# The client's line piped in ahead of the ring is never read.
	in="$BATS_TEST_TMPDIR/in.ndjson"
	echo '{"type":"client.message","message":{"role":"user","content":"again"}}' >"$in"
	ring "cat $in - | agentrt-decide" agentrt-llm "$tools" -- -s "$sid"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" "agentrt-session: session '$sid' has no turn in flight and this run was given nothing to send: it ends now, and what the ring carries for it is not read (send a message with -m TEXT or --input FILE)"
	# A run that does send something says nothing of the kind.
	ring agentrt-decide agentrt-llm "$tools" -- -s "$sid" -m 'And 3*4?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" ""
}
