#!/usr/bin/env bats
# Group commit: how many synced commits a tool step costs (DESIGN §4).
#
# Not a timing: strace counts the syscalls that reach the disk.  With
# LMDB's durable defaults a synced commit is one fdatasync of data.mdb and
# one write of the meta page through a descriptor opened O_DSYNC; an
# unsynced one (art_txn_nosync) is neither.  Two per tool step is the
# budget: one before the tool runs, one before the model is called.

load lib

# steps K: a mock/script agent "steps-K" that calls the no-op tool K
# times, then answers.
steps() {
	local k=$1 d="$BATS_TEST_TMPDIR"
	mkdir -p "$d/agents" "$d/tools"
	printf '#!/bin/sh\ncat >/dev/null\necho ok\n' >"$d/tools/noop"
	chmod +x "$d/tools/noop"
	jq -n --argjson k "$k" '[range($k) | {tool_calls: [{name: "noop",
	    arguments: {i: .}}]}] + [{content: "done after \($k) steps"}]' \
	    >"$d/script-$k.json"
	jq -n --arg f "$d/script-$k.json" '{model: "mock/script",
	    tools: [{name: "noop", description: "no-op"}],
	    mock: {script_file: $f}}' >"$d/agents/steps-$k.json"
}

# traced_turn K: one turn of steps-K in a fresh store, agentrt-session
# run under strace; the trace is $BATS_TEST_TMPDIR/trace-K.
traced_turn() {
	local k=$1 fifo="$BATS_TEST_TMPDIR/ring"

	steps "$k"
	rm -rf "$AGENTRT_DB" "$fifo" "$EVENTS"
	mkfifo "$fifo"
	# LeakSanitizer cannot run under ptrace; the leak checks run elsewhere.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	run timeout 120 bash -c '
		d=$1 k=$2
		agentrt-decide <"$d/ring" 2>>"$d/stages.err" |
		agentrt-llm 2>>"$d/stages.err" |
		agentrt-tool --tools "$d/tools" 2>>"$d/stages.err" |
		AGENTRT_AGENTS="$d/agents" strace -f -y -o "$d/trace-$k" \
		    -e trace=openat,fdatasync,fsync,msync,pwrite64,write \
		    agentrt-session run --events "$EVENTS" -a "steps-$k" -m go \
		    >"$d/ring"
	' turn "$BATS_TEST_TMPDIR" "$k"
	[ "$status" -eq 0 ] || fail "the turn failed: $output"
	assert_eq "$(events 'select(.type=="completion") | .text')" \
	    "\"done after $k steps\""
}

# syncs K: the fdatasync, fsync and msync calls in trace-K.
syncs() {
	grep -cE '(fdatasync|fsync|msync)\(' "$BATS_TEST_TMPDIR/trace-$1" || true
}

# dsync_writes K: writes through the O_DSYNC descriptor on data.mdb.
dsync_writes() {
	local t="$BATS_TEST_TMPDIR/trace-$1" fd
	fd=$(sed -n 's/.*openat(.*data\.mdb".*O_DSYNC.*) = \([0-9]*\)<.*/\1/p' \
	    "$t" | head -1)
	[ -n "$fd" ] || { echo none; return; }
	grep -cE "pwrite64\\($fd<[^>]*data\\.mdb>" "$t" || true
}

setup() {
	command -v strace >/dev/null || skip "no strace (apt-get install strace)"
	strace -f -o /dev/null true 2>/dev/null ||
	    skip "strace cannot trace here (ptrace refused)"
}

@test "a tool step costs at most two synced commits" {
	traced_turn 5
	local s5 m5 s25 m25
	s5=$(syncs 5) m5=$(dsync_writes 5)
	traced_turn 25
	s25=$(syncs 25) m25=$(dsync_writes 25)
	echo "syncs: K=5 $s5, K=25 $s25; O_DSYNC meta writes: K=5 $m5, K=25 $m25"
	# What 20 more steps cost, so the turn's fixed part does not count.
	[ $((s25 - s5)) -le 40 ] ||
	    fail "$(( (s25 - s5) / 20 )) syncs per tool step ($s5 at K=5, $s25 at K=25)"
	# And the fixed part stays small: opening, starting, ending the turn.
	[ "$s5" -le $((2 * 5 + 8)) ] || fail "$s5 syncs for a 5-step turn"
	if [ "$m5" != none ]; then
		[ $((m25 - m5)) -le 40 ] ||
		    fail "$m5/$m25 meta pages written O_DSYNC at K=5/25"
	fi
}

@test "each model call goes out after a synced commit" {
	traced_turn 5
	# Between two llm.request lines written to the ring (and before the
	# first) there is an fdatasync: the call's intent was made durable.
	run awk '
		/fdatasync\(/ { synced = 1 }
		/write\(1<.*"\{\\"type\\":\\"llm\.request/ {
			n++; if (!synced) bad++; synced = 0 }
		END { print n + 0, bad + 0 }' "$BATS_TEST_TMPDIR/trace-5"
	assert_eq "$output" "6 0"
}

@test "AGENTRT_SYNC=always syncs every commit; another value is refused" {
	traced_turn 5
	local effects=$(syncs 5) always
	AGENTRT_SYNC=always traced_turn 5
	always=$(syncs 5)
	echo "syncs for K=5: effects $effects, always $always"
	# Every step's four or five commits, not two.
	[ "$always" -ge $((effects + 2 * 5)) ] || fail "effects $effects, always $always"
	run env AGENTRT_SYNC=sometimes agentrt-session run -a steps-5 -m go </dev/null
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: bad AGENTRT_SYNC 'sometimes': use effects or always"
}
