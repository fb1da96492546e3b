#!/usr/bin/env bats
# The tool outbox: a finished tool's result survives its engine or its
# stage dying, a tool runs at most once per attempt, and an attempt whose
# stage died while it ran says so.  Real rings, real kill -9.

load lib

setup() {
	effect_setup
}

teardown() {
	kill_stages
}

# ring_fg RUN-ARGS...: lib's ring, the effect tool's directory passed on.
ring_fg() {
	TOOL_ARGS="--env EFFECT_DIR" ring "$@"
}

# outbox_entries: how many entries the store's outbox holds (mdb_dump
# prints a key line and a value line for each).
outbox_entries() {
	local n
	n=$(mdb_dump -n -s outbox "$AGENTRT_DB/data.mdb" 2>/dev/null |
	    sed -n '/^HEADER=END/,/^DATA=END/p' | grep -c '^ ' || true)
	echo $((n / 2))
}

@test "the engine killed while a tool runs: the tool's result is kept, and the resumed turn gets it" {
	local sid=01900000-0000-7000-8000-0000000000b1
	bg_ring -s "$sid" -a effect -m go
	wait_lines "$EFFECT_DIR/started" 1
	kill -9 "$(cat "$BATS_TEST_TMPDIR/pids/session")"
	wait "$RING_PID" || true
	# The tool stage finished the tool and kept its result.
	assert_eq "$(wc -l <"$EFFECT_DIR/effects")" 1
	ring_fg -s "$sid"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" \
	    '"effect said: done on attempt 1"'
	# It ran once: the redelivered attempt was answered from the outbox.
	assert_eq "$(wc -l <"$EFFECT_DIR/started")" 1
	assert_eq "$(wc -l <"$EFFECT_DIR/effects")" 1
	! grep -q "dispatch lost" <(agentrt-session log "$sid") || fail "a lost dispatch"
	# Settled, the call's outbox entry is gone.
	assert_eq "$(outbox_entries)" 0
}

@test "the engine killed while two tools run: the stage outlives it, and the slow one's result is kept" {
	local sid=01900000-0000-7000-8000-0000000000b9
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "mock/script", "tools": [
	    {"name": "nap", "description": "naps 0.6 s"},
	    {"name": "effect", "description": "does its effect once"}],
	    "mock": {"script": [{"tool_calls": [{"name": "nap", "arguments": {}},
	        {"name": "effect", "arguments": {}}]}, {"content": "both done"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/two.json"
	export AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS"
	EFFECT_SLEEP=3 bg_ring -s "$sid" -a two -m go
	wait_lines "$EFFECT_DIR/started" 1
	kill -9 "$(cat "$BATS_TEST_TMPDIR/pids/session")"
	# nap's result, 0.6 s in, finds its reader gone: the stage drops it
	# (the outbox has it) and waits for effect instead of dying with it.
	wait "$RING_PID" || true
	assert_eq "$(wc -l <"$EFFECT_DIR/effects")" 1
	grep -q "agentrt-tool: the ring's next stage is gone: 1 tool call still running is let finish" \
	    "$BATS_TEST_TMPDIR/stages.err"
	ring_fg -s "$sid"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" '"both done"'
	# The model heard both real results; neither tool ran twice.
	assert_eq "$(agentrt-tree path "$sid" | jq -sc 'map(select(.role == "tool") | .content)')" \
	    '["rested","done on attempt 1"]'
	assert_eq "$(wc -l <"$EFFECT_DIR/started")" 1
	! agentrt-session log "$sid" | grep -q "interrupted while running"
}

@test "the tool stage killed while a tool runs: the tool dies with it, and the call says it was interrupted" {
	local sid=01900000-0000-7000-8000-0000000000b2
	EFFECT_SLEEP=2 bg_ring -s "$sid" -a effect -m go
	wait_lines "$EFFECT_DIR/started" 1
	kill -9 "$(cat "$BATS_TEST_TMPDIR/pids/tool")"
	wait "$RING_PID" || true
	sleep 2.5
	# The tool was killed with its stage: no effect.
	assert_eq "$(wc -l <"$EFFECT_DIR/effects")" 0
	ring_fg -s "$sid"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.errored") | [.error, .retryable]][0]')" \
	    '["interrupted while running: the tool stage running it died",true]'
	events 'select(.type=="completion") | .text' | tail -1 | grep -q 'interrupted while running'
	# No policy retry: it never ran again.
	assert_eq "$(wc -l <"$EFFECT_DIR/started")" 1
}

@test "interrupted, and the policy retries: the next attempt runs, numbered 2" {
	local sid=01900000-0000-7000-8000-0000000000b3
	EFFECT_SLEEP=2 bg_ring -s "$sid" -a effect-retry -m go
	wait_lines "$EFFECT_DIR/started" 1
	kill -9 "$(cat "$BATS_TEST_TMPDIR/pids/tool")"
	wait "$RING_PID" || true
	ring_fg -s "$sid"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" \
	    '"effect said: done on attempt 2"'
	assert_eq "$(cut -d' ' -f2 "$EFFECT_DIR/started" | tr '\n' ' ')" '1 2 '
	assert_eq "$(cat "$EFFECT_DIR/effects" | cut -d' ' -f2)" 2
}

@test "a ring restarted while the old tool stage still runs the tool waits for its result" {
	local sid=01900000-0000-7000-8000-0000000000b4
	EFFECT_SLEEP=2 bg_ring -s "$sid" -a effect -m go
	wait_lines "$EFFECT_DIR/started" 1
	local old_tool
	old_tool=$(cat "$BATS_TEST_TMPDIR/pids/tool")
	kill -9 "$(cat "$BATS_TEST_TMPDIR/pids/session")"
	# The old stage still runs the tool when the new ring asks for it.
	kill -0 "$old_tool"
	ring_fg -s "$sid"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" \
	    '"effect said: done on attempt 1"'
	assert_eq "$(wc -l <"$EFFECT_DIR/started")" 1
	assert_eq "$(wc -l <"$EFFECT_DIR/effects")" 1
	wait "$RING_PID" || true
}

@test "rm removes a session's outbox entries" {
	local sid=01900000-0000-7000-8000-0000000000b5
	EFFECT_SLEEP=2 bg_ring -s "$sid" -a effect -m go
	wait_lines "$EFFECT_DIR/started" 1
	kill -9 "$(cat "$BATS_TEST_TMPDIR/pids/session")"
	wait "$RING_PID" || true
	# Kept, not yet settled: the entry is there.
	assert_eq "$(outbox_entries)" 1
	run agentrt-session rm "$sid"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(outbox_entries)" 0
}
