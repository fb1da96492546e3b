#!/usr/bin/env bats
# A whole ring run again from agentrt-tool's tape: no tool runs the second time.

load lib

# tool_ring TOOL-ARGS -- RUN-ARGS...: decide | llm | tool TOOL-ARGS |
# session run RUN-ARGS, over a fifo.  TOOL-ARGS are split on spaces.
tool_ring() {
	local fifo="$BATS_TEST_TMPDIR/ring" targs=()

	while [ "$1" != -- ]; do
		targs+=("$1")
		shift
	done
	shift
	rm -f "$fifo"
	mkfifo "$fifo"
	TOOL_ARGS="${targs[*]}"
	export TOOL_ARGS
	run timeout 60 bash -c '
		fifo=$1; shift
		agentrt-decide <"$fifo" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-llm 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-tool $TOOL_ARGS 2>>"$BATS_TEST_TMPDIR/stages.err" |
		AGENTRT_AGENTS="$AGENTS" agentrt-session run --events "$EVENTS" "$@" >"$fifo"
	' ring "$fifo" "$@"
}

@test "the calc agent recorded through agentrt-tool --record replays in a fresh store with no tools" {
	tape=$BATS_TEST_TMPDIR/tape
	tool_ring --tools "$top_srcdir/examples/tools" --record "$tape" -- \
	    -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	[ "$(wc -l <"$tape")" -eq 1 ]
	assert_eq "$(jq -c '[.name, .arguments, .result]' "$tape")" \
	    '["calc",{"expr":"17*23"},"391"]'

	export AGENTRT_DB=$BATS_TEST_TMPDIR/db2
	EVENTS=$BATS_TEST_TMPDIR/events2.ndjson
	: >"$BATS_TEST_TMPDIR/stages.err"
	tool_ring --replay "$tape" --tools /nonexistent -- \
	    -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	assert_eq "$(events 'select(.type=="tool_result") | [.name, .result]')" '["calc","391"]'
	[ ! -s "$BATS_TEST_TMPDIR/stages.err" ] ||
	    fail "$(cat "$BATS_TEST_TMPDIR/stages.err")"
	[ "$(agentrt-session ls -q | wc -l)" -eq 1 ]
}
