#!/usr/bin/env bats
# replay.bats - agentrt-session replay: a recording run again offline,
# faithful or diverging

load lib

# record RUN-ARGS...: one ring (ring), its session exported to rec.ndjson.
record() {
	ring "$@"
	agentrt-session export --children "$(root_session)" >"$BATS_TEST_TMPDIR/rec.ndjson"
}

# replay ARGS...: agentrt-session replay in an empty directory (no tools
# there, so a tool run for real would fail), status and output as run.
replay() {
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	run bash -c 'cd "$1" && shift && timeout 60 agentrt-session replay "$@" 2>"$BATS_TEST_TMPDIR/replay.err"' \
	    replay "$BATS_TEST_TMPDIR/empty" "$@"
}

@test "a recorded tool loop replays faithfully, with no tool run and a new session" {
	record -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(the_session)
	ring -s "$sid" -m 'again'
	agentrt-session export "$sid" >"$BATS_TEST_TMPDIR/rec.ndjson"
	replay "$BATS_TEST_TMPDIR/rec.ndjson"
	[ "$status" -eq 0 ] || fail "$output $(cat "$BATS_TEST_TMPDIR/replay.err")"
	assert_eq "$(jq -c '[.type, .recorded, (.events > 10)]' <<<"$output")" "[\"replay.passed\",\"$sid\",true]"
	new=$(jq -r .session <<<"$output")
	[ "$new" != "$sid" ]
	# The new session did what the recording did: the same transcript.
	assert_eq "$(agentrt-tree path "$new" | jq -sc 'map(.content)')" \
	    "$(agentrt-tree path "$sid" | jq -sc 'map(.content)')"
	assert_eq "$(agentrt-session log "$new" | jq -sc '[.[].payload | select(.type == "tool.call.completed") | .result]')" '["391","391"]'
}

@test "a changed jq policy is reported as the first divergence, exit 1" {
	record -a calc -m 'What is 17*23?'
	replay --policy "$fixtures/policies/one-model-call.jq" "$BATS_TEST_TMPDIR/rec.ndjson"
	[ "$status" -eq 1 ] || fail "$output"
	assert_eq "$(jq -c '[.type, .event.type, .expected.type, .actual.type]' <<<"$output")" \
	    '["replay.divergence","llm.call.requested","llm.call.requested","turn.completed"]'
	# What the recording did next, and what the replay did instead.
	assert_eq "$(jq -c '.actual.data' <<<"$output")" '"stopped after one model call"'
	assert_eq "$(jq -c '.expected.messages[-1].role' <<<"$output")" '"tool"'
	# The same policy file on its own, through the usual ring, does so too.
	DECIDE="-f $fixtures/policies/one-model-call.jq" ring -a calc -m 'What is 17*23?'
	assert_eq "$(events 'select(.type == "completion") | .text' | tail -1)" '"stopped after one model call"'
}

@test "a changed prompt (--agents) diverges at the first model call" {
	record -a calc -m 'What is 17*23?'
	mkdir -p "$BATS_TEST_TMPDIR/mine"
	jq '.system = "You are terse."' "$top_srcdir/examples/agents/calc.json" >"$BATS_TEST_TMPDIR/mine/calc.json"
	replay --agents "$BATS_TEST_TMPDIR/mine" "$BATS_TEST_TMPDIR/rec.ndjson"
	[ "$status" -eq 1 ] || fail "$output"
	assert_eq "$(jq -c '[.event.index, .expected.messages[0].content, .actual.messages[0].content]' <<<"$output")" \
	    '[1,"You are a calculator. Use the calc tool for arithmetic.","You are terse."]'
}

@test "an approval resumed, and sub-agents, replay faithfully" {
	ring -a guarded -m go
	[ "$status" -eq 3 ] || fail "$output"
	s=$(the_session)
	ring -s "$s" --resume "$(agentrt-session show "$s" | jq -r '.interrupts | keys[0]')" --payload '{"approved":true}'
	[ "$status" -eq 0 ] || fail "$output"
	agentrt-session export "$s" >"$BATS_TEST_TMPDIR/g.ndjson"
	replay "$BATS_TEST_TMPDIR/g.ndjson"
	[ "$status" -eq 0 ] || fail "$output $(cat "$BATS_TEST_TMPDIR/replay.err")"
	new=$(jq -r .session <<<"$output")
	assert_eq "$(agentrt-session log "$new" | jq -sc '[.[].payload.type | select(. == "tool.call.approved" or . == "session.interrupted")]')" \
	    '["session.interrupted","tool.call.approved"]'
	agentrt-session rm "$s" "$new"
	# The two sub-agents answer in parallel: whichever finishes first is
	# recorded first, in the recording and in the replay alike.
	record -a boss -m 'split the work'
	old=$(root_session)
	replay "$BATS_TEST_TMPDIR/rec.ndjson"
	[ "$status" -eq 0 ] || fail "$output $(cat "$BATS_TEST_TMPDIR/replay.err")"
	new=$(jq -r .session <<<"$output")
	[[ "$(agentrt-tree path "$new" | jq -sc 'map(.content) | last')" == '"combined: '* ]] || fail "no answer"
	assert_eq "$(agentrt-tree path "$new" | jq -sc 'map(.content) | last')" \
	    "$(agentrt-tree path "$old" | jq -sc 'map(.content) | last')"
}

@test "a model call over HTTP replays with the server gone" {
	start_server
	export OPENAI_API_KEY=sk-replay-test OPENAI_BASE_URL="$srv/loop/2/v1"
	record -a http-openai -m 'add'
	[ "$status" -eq 0 ] || fail "$output"
	stop_server
	replay "$BATS_TEST_TMPDIR/rec.ndjson"
	[ "$status" -eq 0 ] || fail "$output $(cat "$BATS_TEST_TMPDIR/replay.err")"
}

@test "replay refuses a bad file with its line number" {
	record -a calc -m 'What is 17*23?'
	n=$(agentrt-session ls -q | wc -l)
	jq -c -s 'del(.[3]) | .[]' "$BATS_TEST_TMPDIR/rec.ndjson" >"$BATS_TEST_TMPDIR/gap.ndjson"
	replay "$BATS_TEST_TMPDIR/gap.ndjson"
	[ "$status" -eq 1 ]
	[[ "$(cat "$BATS_TEST_TMPDIR/replay.err")" == *"gap.ndjson: line 4: seq 4 of session"*"nothing replayed"* ]] ||
	    fail "$(cat "$BATS_TEST_TMPDIR/replay.err")"
	replay --policy "$BATS_TEST_TMPDIR/nopolicy.jq" "$BATS_TEST_TMPDIR/rec.ndjson"
	[ "$status" -eq 2 ]
	[[ "$(cat "$BATS_TEST_TMPDIR/replay.err")" == *"replay: --policy '$BATS_TEST_TMPDIR/nopolicy.jq': No such file or directory"* ]] ||
	    fail "$(cat "$BATS_TEST_TMPDIR/replay.err")"
	replay "$BATS_TEST_TMPDIR/none.ndjson"
	[ "$status" -eq 1 ]
	[[ "$(cat "$BATS_TEST_TMPDIR/replay.err")" == *"none.ndjson"*"No such file"* ]]
	assert_eq "$(agentrt-session ls -q | wc -l)" "$n"
	# Its scratch directory is gone.
	run ls "$BATS_TEST_TMPDIR" 
	[[ "$output" != *agentrt-replay.* ]] || fail "$output"
}
