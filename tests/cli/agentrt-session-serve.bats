#!/usr/bin/env bats
# agentrt-session serve: one long-lived engine for many sessions, on a real
# ring (decide | llm | tool | serve over a fifo, the mock model), fed client
# lines as a bus bridge would feed it.

load lib

AGENTS="$top_srcdir/tests/fixtures/agents:$top_srcdir/examples/agents"
export AGENTRT_AGENTS="$AGENTS"

setup() {
	EV=$BATS_TEST_TMPDIR/ev.ndjson
	P=$BATS_TEST_TMPDIR/pids
	CTL=$BATS_TEST_TMPDIR/ctl.ndjson
	export EFFECT_DIR=$BATS_TEST_TMPDIR/fx EV
	mkdir -p "$EFFECT_DIR" "$P"
	: >"$EFFECT_DIR/started"
	: >"$EFFECT_DIR/effects"
	: >"$CTL"
}

# Every process a test started, killed; then their subshells waited for.
teardown() {
	local f
	for f in "$P"/*; do
		case $f in *.ring|*.rc) continue ;; esac
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	wait 2>/dev/null
	return 0
}

# msg SESSION [AGENT] [TEXT]: a client.message line for SESSION.
msg() {
	jq -nc --arg s "$1" --arg a "${2:-}" --arg t "${3:-hello}" \
	    '{type: "client.message", session_id: $s,
	      message: {role: "user", content: $t}} +
	     (if $a == "" then {} else {agent_id: $a} end)'
}

# serve_ring NAME INPUT [SERVE-ARGS...]: in the background, INPUT's lines
# then the ring's (and, later, what is appended to $CTL) into decide | llm
# | tool | serve >ring.  Each process's pid is in $P/NAME.STAGE, serve's
# exit status in $P/NAME.serve.rc once it ends; its stderr goes to
# $BATS_TEST_TMPDIR/NAME.err.
serve_ring() {
	local name=$1 in=$2 ring=$BATS_TEST_TMPDIR/ring
	shift 2
	rm -f "$ring" "$P/$name.serve.rc"
	mkfifo "$ring"
	(
		{
			cat "$in"
			sh -c 'echo $$ >"$0"; exec tail -n 0 -f "$1"' \
			    "$P/$name.tail" "$CTL" &
			sh -c 'echo $$ >"$0"; exec cat "$1"' "$P/$name.cat" "$ring"
		} |
		sh -c 'echo $$ >"$0"; exec agentrt-decide' "$P/$name.decide" |
		sh -c 'echo $$ >"$0"; exec agentrt-llm' "$P/$name.llm" |
		sh -c 'echo $$ >"$0"; exec agentrt-tool --env EFFECT_DIR \
		    --tools "$1" --tools "$2"' "$P/$name.tool" \
		    "$top_srcdir/tests/fixtures/tools" \
		    "$top_srcdir/examples/tools" |
		sh -c 'rc=$0.rc; shift; exec 3<&0
		    agentrt-session serve --events "$EV" "$@" <&3 3<&- &
		    echo $! >"$0"; wait $!; echo $? >"$rc"' \
		    "$P/$name.serve" - "$@" >"$ring" \
		    2>>"$BATS_TEST_TMPDIR/$name.err"
	) 2>>"$BATS_TEST_TMPDIR/stages.err" &
	echo $! >"$P/$name.ring"
	wait_file "$P/$name.serve"
}

wait_file() {
	local i
	for i in $(seq 1 200); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	fail "no $1"
}

# stop_ring NAME: the ring's other stages killed, its subshell waited for.
stop_ring() {
	local f
	for f in "$P/$1".*; do
		case $f in *.ring|*.rc) continue ;; esac
		kill -9 "$(cat "$f")" 2>/dev/null || true
	done
	wait "$(cat "$P/$1.ring")" 2>/dev/null || true
}

# completions SESSION: how many turns of SESSION completed, on --events.
completions() {
	jq -c --arg s "$1" 'select(.type == "completion" and .session_id == $s
	    and .code == null)' "$EV" 2>/dev/null | wc -l
}

# wait_completions SESSION N: up to 30 s for N completed turns of SESSION.
wait_completions() {
	local i
	for i in $(seq 1 600); do
		[ "$(completions "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "session $1 completed $(completions "$1") turns, not $2: $(cat \
	    "$BATS_TEST_TMPDIR"/*.err)"
}

turn_status() {
	agentrt-session show "$1" | jq -r .turn_status
}

# user_messages SESSION: the user messages recorded in SESSION.
user_messages() {
	agentrt-session log "$1" | jq -c 'select(.payload.type ==
	    "message.new" and .payload.message.role == "user")' | wc -l
}

@test "serve: several new sessions' first messages all complete" {
	local in=$BATS_TEST_TMPDIR/in.ndjson s
	{ msg a1 calc; msg a2 calc; msg a3 echo 'say this'; } >"$in"
	serve_ring one "$in"
	for s in a1 a2 a3; do
		wait_completions "$s" 1
		assert_eq "$(turn_status "$s")" completed
		assert_eq "$(user_messages "$s")" 1
	done
	assert_eq "$(agentrt-session show a1 | jq -r .agent_id)" calc
	assert_eq "$(agentrt-session show a3 | jq -r .agent_id)" echo
	jq -s -e 'any(.[]; .type == "completion" and .session_id == "a1" and
	    (.text | test("391")))' "$EV"
}

@test "serve: a follow-up message to a completed session runs a second turn" {
	local in=$BATS_TEST_TMPDIR/in.ndjson
	msg f1 echo first >"$in"
	serve_ring one "$in"
	wait_completions f1 1
	# No agent_id: the session exists, so a later line takes it on again.
	msg f1 '' second >>"$CTL"
	wait_completions f1 2
	assert_eq "$(user_messages f1)" 2
	assert_eq "$(turn_status f1)" completed
	agentrt-session log f1 | jq -e -s '[.[] | select(.payload.type ==
	    "turn.started")] | length == 2'
}

@test "serve: lines for two sessions interleaved, refusals between them" {
	local in=$BATS_TEST_TMPDIR/in.ndjson
	{
		msg i1 calc
		echo '{"type":"client.message","message":{"role":"user","content":"x"}}'
		msg i2 echo one
		msg ghost '' boo
		echo 'not json'
		msg i3 nosuchagent
	} >"$in"
	serve_ring one "$in"
	wait_completions i1 1
	wait_completions i2 1
	# Refused: one stderr line each, naming the line's type and session.
	grep -q "refused client.message: the line names no session_id" \
	    "$BATS_TEST_TMPDIR/one.err"
	grep -q "refused client.message for session 'ghost': no session" \
	    "$BATS_TEST_TMPDIR/one.err"
	grep -q "refused client.message for session 'i3': no agent 'nosuchagent'" \
	    "$BATS_TEST_TMPDIR/one.err"
	# ... an error event each, and nothing recorded.
	jq -e -s '[.[] | select(.type == "error") | .code] |
	    (index("no_session") != null) and (index("unknown_session") !=
	    null) and (index("no_agent") != null)' "$EV"
	jq -e -s 'any(.[]; .type == "error" and .session_id == "ghost")' "$EV"
	assert_eq "$(agentrt-session ls -q | sort | tr '\n' ' ')" "i1 i2 "
	# Never on stdout: nothing refused came back round the ring.
	run grep -c "refused" "$BATS_TEST_TMPDIR/stages.err"
	assert_eq "$output" 0
	# serve goes on: a new session after them still runs.
	msg i4 echo later >>"$CTL"
	wait_completions i4 1
}

@test "serve: killed mid-turn, the next serve adopts the turn and finishes it" {
	local in=$BATS_TEST_TMPDIR/in.ndjson
	export EFFECT_SLEEP=1.5
	msg k1 effect go >"$in"
	serve_ring one "$in"
	wait_lines "$EFFECT_DIR/started" 1
	kill -9 "$(cat "$P/one.serve")"
	stop_ring one
	assert_eq "$(turn_status k1)" running
	: >"$BATS_TEST_TMPDIR/empty"
	serve_ring two "$BATS_TEST_TMPDIR/empty"
	wait_completions k1 1
	assert_eq "$(turn_status k1)" completed
	assert_eq "$(user_messages k1)" 1
	# The tool was not run again: the tool stage's outbox knew it had
	# started (and was killed with its stage).
	assert_eq "$(wc -l <"$EFFECT_DIR/started")" 1
	[ "$(wc -l <"$EFFECT_DIR/effects")" -le 1 ]
	jq -s -e 'any(.[]; .type == "completion" and .session_id == "k1" and
	    (.text | test("effect said")))' "$EV"
}

@test "serve: SIGTERM leaves the turn in flight, not cancelled, and exits 0" {
	local in=$BATS_TEST_TMPDIR/in.ndjson
	export EFFECT_SLEEP=3
	msg t1 effect go >"$in"
	serve_ring one "$in"
	wait_lines "$EFFECT_DIR/started" 1
	# While serve drives it, the session is its: cancel is refused.
	run agentrt-session cancel t1
	[ "$status" -eq 1 ]
	[[ $output == *"driven by process"* ]]
	kill -TERM "$(cat "$P/one.serve")"
	wait_file "$P/one.serve.rc"
	assert_eq "$(cat "$P/one.serve.rc")" 0
	grep -q "stopped (SIGTERM): 1 sessions in flight are left as recorded" \
	    "$BATS_TEST_TMPDIR/one.err"
	assert_eq "$(turn_status t1)" running
	run agentrt-session log t1
	[[ $output != *cancelled* ]]
	[[ $output != *turn.failed* ]]
	# Its driver record is gone: the next serve adopts it at once.
	stop_ring one
	: >"$BATS_TEST_TMPDIR/empty"
	serve_ring two "$BATS_TEST_TMPDIR/empty"
	wait_completions t1 1
}

@test "serve --acks: the counts written are the lines taken; EOF exits 0" {
	local acks=$BATS_TEST_TMPDIR/acks in=$BATS_TEST_TMPDIR/in.ndjson
	{
		msg c1 echo
		msg c2 echo
		echo '{"broken'
		echo
		msg nobody
		msg c3 echo
	} >"$in"
	mkfifo "$acks"
	cat "$acks" >"$BATS_TEST_TMPDIR/acks.out" &
	echo $! >"$P/acks.cat"
	run sh -c 'exec agentrt-session serve --acks "$1" --events "$EV" \
	    <"$2" >"$3"' - "$acks" "$in" "$BATS_TEST_TMPDIR/out"
	[ "$status" -eq 0 ]
	wait "$(cat "$P/acks.cat")"
	# Six lines read (the blank one too); the last count says so.
	assert_eq "$(tail -n 1 "$BATS_TEST_TMPDIR/acks.out")" 6
	# Counts only grow, and none is past the input.
	sort -n -c "$BATS_TEST_TMPDIR/acks.out"
	[ "$(sort -n "$BATS_TEST_TMPDIR/acks.out" | tail -n 1)" -le 6 ]
	[[ $output == *"<stdin>:3: "* ]]
	[[ $output == *"refused client.message for session 'nobody'"* ]]
	# The sessions' first decisions went out; nobody answered them.
	assert_eq "$(jq -r .type "$BATS_TEST_TMPDIR/out" | sort | uniq -c |
	    awk '{print $1, $2}')" "3 decision.request"
	# At EOF nothing is cancelled: the three are left as they were.
	assert_eq "$(agentrt-session ls -q | wc -l)" 3
}

@test "serve: a session a live run drives is refused as busy" {
	local fifo=$BATS_TEST_TMPDIR/runring in=$BATS_TEST_TMPDIR/in.ndjson
	export EFFECT_SLEEP=3
	mkfifo "$fifo"
	agentrt-session new -a effect --id b1
	(
		sh -c 'echo $$ >"$0"; exec agentrt-decide' "$P/run.decide" \
		    <"$fifo" |
		sh -c 'echo $$ >"$0"; exec agentrt-llm' "$P/run.llm" |
		sh -c 'echo $$ >"$0"; exec agentrt-tool --env EFFECT_DIR \
		    --tools "$1"' "$P/run.tool" "$top_srcdir/tests/fixtures/tools" |
		sh -c 'echo $$ >"$0"; exec agentrt-session run -s b1 -m go' \
		    "$P/run.session" >"$fifo"
	) 2>>"$BATS_TEST_TMPDIR/stages.err" &
	echo $! >"$P/run.ring"
	wait_lines "$EFFECT_DIR/started" 1
	msg b1 effect again >"$in"
	run agentrt-session serve --events "$EV" <"$in" >/dev/null
	[ "$status" -eq 0 ]
	[[ $output == *"refused client.message for session 'b1': session 'b1' is driven by process"* ]]
	jq -s -e 'any(.[]; .type == "error" and .code == "busy" and
	    .session_id == "b1")' "$EV"
	assert_eq "$(user_messages b1)" 1
}

@test "serve: 200 short sessions leave none driven" {
	local in=$BATS_TEST_TMPDIR/in.ndjson i ids=()
	for i in $(seq 1 200); do
		msg "m$i" echo "n$i"
	done >"$in"
	serve_ring one "$in"
	for i in 1 50 100 150 200; do
		wait_completions "m$i" 1
	done
	[ "$(jq -c 'select(.type == "completion" and .code == null)' "$EV" |
	    wc -l)" -eq 200 ]
	# serve still runs, and holds none of them: cancel, which refuses a
	# session a live process drives, takes every one.
	kill -0 "$(cat "$P/one.serve")"
	for i in $(seq 1 200); do
		ids+=("m$i")
	done
	run agentrt-session cancel "${ids[@]}"
	[ "$status" -eq 0 ]
	# And a later line takes one on again.
	msg m7 '' again >>"$CTL"
	wait_completions m7 2
}

@test "serve: bad usage exits 2, an --acks it cannot open exits 1" {
	run agentrt-session serve --bogus </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"unrecognized option '--bogus'"* ]]
	run agentrt-session serve extra </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"usage: agentrt-session serve"* ]]
	run agentrt-session serve --max-line abc </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"bad --max-line 'abc'"* ]]
	run agentrt-session serve --acks "$BATS_TEST_TMPDIR/no/such" </dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"open --acks '$BATS_TEST_TMPDIR/no/such'"* ]]
}

# idle SESSION: the states session.idle said of SESSION, on --events.
idle() {
	jq -r --arg s "$1" 'select(.type == "session.idle" and
	    .session_id == $s) | .state' "$EV" 2>/dev/null | tr '\n' ' '
}

# wait_idle SESSION STATE: up to 30 s for session.idle of SESSION in STATE.
wait_idle() {
	local i
	for i in $(seq 1 600); do
		[[ " $(idle "$1")" == *" $2 "* ]] && return 0
		sleep 0.05
	done
	fail "session $1: session.idle said '$(idle "$1")', not $2: $(cat \
	    "$BATS_TEST_TMPDIR"/*.err)"
}

@test "serve --clients: a front end's lines, session.cancel, session.idle" {
	local cl=$BATS_TEST_TMPDIR/clients fd
	export EFFECT_SLEEP=6
	mkfifo "$cl"
	: >"$BATS_TEST_TMPDIR/empty"
	# The front end's pipe, held open by the test: serve opens it too.
	exec {fd}<>"$cl"
	serve_ring one "$BATS_TEST_TMPDIR/empty" --clients "$cl"
	# A client line on --clients runs a turn; its end is session.idle.
	msg k1 echo hi >&"$fd"
	wait_completions k1 1
	wait_idle k1 completed
	# A turn cancelled from there: only that one, the other finishes.
	msg k2 effect go >&"$fd"
	wait_lines "$EFFECT_DIR/started" 1
	msg k3 echo also >&"$fd"
	wait_completions k3 1
	echo '{"type":"session.cancel","session_id":"k2","reason":"client left"}' >&"$fd"
	wait_idle k2 failed
	agentrt-session log k2 | grep -q '"client left"'
	assert_eq "$(turn_status k2)" failed
	agentrt-session log k2 | grep -q '"call.voided"'
	assert_eq "$(turn_status k3)" completed
	# A cancel with no session, a line not JSON: said, and serve goes on.
	echo '{"type":"session.cancel"}' >&"$fd"
	echo '{"type":' >&"$fd"
	echo '{"type":"client.message","session_id":"k9","agent_id":"echo","message":{"role":"user","content":"x"},"client":{"state":{"n":1e400}}}' >&"$fd"
	msg k4 echo four >&"$fd"
	wait_completions k4 1
	grep -q "refused session.cancel: session.cancel needs a valid session_id" \
	    "$BATS_TEST_TMPDIR/one.err"
	grep -q -- "--clients:[0-9]*: " "$BATS_TEST_TMPDIR/one.err"
	grep -q -- "--clients:[0-9]*: the number at /client/state/n (1e400) is out of range" \
	    "$BATS_TEST_TMPDIR/one.err"
	run agentrt-session show k9
	[ "$status" -ne 0 ]
	jq -s -e 'any(.[]; .type == "error" and .code == "bad_session")' "$EV"
	# The front end goes: serve serves its stdin on.
	exec {fd}>&-
	msg k5 echo five >>"$CTL"
	wait_completions k5 1
	kill -0 "$(cat "$P/one.serve")"
}

@test "serve --clients: a file it cannot open exits 1, naming it" {
	run agentrt-session serve --clients "$BATS_TEST_TMPDIR/no/such" </dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"open --clients '$BATS_TEST_TMPDIR/no/such'"* ]]
}

@test "serve: a client line with a part of no seed type is refused as bad_input" {
	local in=$BATS_TEST_TMPDIR/in.ndjson
	{
		echo '{"type":"client.message","session_id":"p1","agent_id":"echo","message":{"role":"user","content":[{"type":"sticker"}]}}'
		msg p2 echo fine
	} >"$in"
	serve_ring one "$in"
	wait_completions p2 1
	jq -s -e 'any(.[]; .type == "error" and .code == "bad_input" and
	    .session_id == "p1" and (.message | test("unknown part type .sticker.")))' "$EV"
	assert_eq "$(user_messages p1)" 0
}
