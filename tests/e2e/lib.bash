# lib.bash - whole rings over a fifo, for the end-to-end tests
load ../cli/lib

AGENTS="$top_srcdir/tests/fixtures/agents:$top_srcdir/examples/agents"
EVENTS="$BATS_TEST_TMPDIR/events.ndjson"
export AGENTS EVENTS
export TMPDIR="$BATS_TEST_TMPDIR"

# ring RUN-ARGS...: decide | llm | [inject] | tool | session run, over a
# fifo.  DECIDE, LLM_ARGS and TOOL_ARGS hold agentrt-decide's,
# agentrt-llm's and agentrt-tool's own arguments (split on spaces; a
# TOOL_ARGS --tools comes before the usual ones) and INJECT a command put
# between llm and tool.  Sets status and output (stderr of every stage)
# as `run` does.
ring() {
	local fifo="$BATS_TEST_TMPDIR/ring"

	rm -f "$fifo"
	mkfifo "$fifo"
	export DECIDE INJECT LLM_ARGS TOOL_ARGS
	run timeout 60 bash -c '
		fifo=$1; shift
		agentrt-decide $DECIDE <"$fifo" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-llm $LLM_ARGS 2>>"$BATS_TEST_TMPDIR/stages.err" |
		${INJECT:-cat} |
		agentrt-tool $TOOL_ARGS --tools "$top_srcdir/tests/fixtures/tools" \
		    --tools "$top_srcdir/examples/tools" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		AGENTRT_AGENTS="$AGENTS" agentrt-session run --events "$EVENTS" "$@" >"$fifo"
	' ring "$fifo" "$@"
}

# effect_setup: the effect tool's EFFECT_DIR (tests/fixtures/tools/effect),
# its run and effect counts empty.
effect_setup() {
	export EFFECT_DIR="$BATS_TEST_TMPDIR/fx"
	mkdir -p "$EFFECT_DIR"
	: >"$EFFECT_DIR/started"
	: >"$EFFECT_DIR/effects"
}

# kill_stages: kill -9 whatever bg_ring started that still runs.
kill_stages() {
	local f
	for f in "$BATS_TEST_TMPDIR"/pids/*; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	return 0
}

# bg_ring RUN-ARGS...: the ring in the background, each stage's pid in
# pids/STAGE, the effect tool's EFFECT_DIR passed to the tool stage;
# waits for nothing, and sets RING_PID.  For tests that kill a stage
# mid-turn.
bg_ring() {
	local fifo="$BATS_TEST_TMPDIR/ring" p="$BATS_TEST_TMPDIR/pids"
	mkdir -p "$p"
	rm -f "$fifo" "$p"/*
	mkfifo "$fifo"
	(
		sh -c 'echo $$ >"$0"; exec agentrt-decide' "$p/decide" <"$fifo" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		sh -c 'echo $$ >"$0"; exec agentrt-llm' "$p/llm" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		sh -c 'echo $$ >"$0"; exec agentrt-tool --env EFFECT_DIR --tools "$1"' "$p/tool" \
		    "$top_srcdir/tests/fixtures/tools" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		sh -c 'echo $$ >"$0"; shift; AGENTRT_AGENTS="$AGENTS" exec agentrt-session run --events "$EVENTS" "$@"' \
		    "$p/session" - "$@" >"$fifo" 2>>"$BATS_TEST_TMPDIR/session.err"
	) &
	RING_PID=$!
}

# ring_exec RUN-ARGS...: ring with agentrt-decide --exec "$DECIDE_EXEC".
ring_exec() {
	local fifo="$BATS_TEST_TMPDIR/ring"

	rm -f "$fifo"
	mkfifo "$fifo"
	export DECIDE_EXEC
	run timeout 60 bash -c '
		fifo=$1; shift
		agentrt-decide --exec "$DECIDE_EXEC" <"$fifo" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-llm 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-tool --tools "$top_srcdir/examples/tools" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		AGENTRT_AGENTS="$AGENTS" agentrt-session run --events "$EVENTS" "$@" >"$fifo"
	' ring "$fifo" "$@"
}

# The session that is no one's sub-agent (ls does not print ancestry).
root_session() {
	local id
	for id in $(agentrt-session ls -q); do
		[ "$(agentrt-session show "$id" | jq -c .ancestry)" = '[]' ] &&
		    echo "$id" && return
	done
}

# The session this test made (the store holds one).
the_session() {
	agentrt-session ls -q | tail -1
}

# events FILTER: the jq filter over the client events, compact.
events() {
	jq -c "$1" "$EVENTS"
}

# log FILTER: the jq filter over the session's log, slurped (strings raw).
log_of() {
	agentrt-session log "$(the_session)" | jq -s -c -r "$1"
}
