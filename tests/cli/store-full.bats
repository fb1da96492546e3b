#!/usr/bin/env bats
# store-full.bats - a store on a full disk says so, and resumes once freed

load lib

# A small tmpfs of our own for the store; tests skip where mounting is
# not allowed (it needs root, which CI has).
setup() {
	mnt=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$mnt" "$BATS_TEST_TMPDIR/agents"
	mount -t tmpfs -o size=2m tmpfs "$mnt" 2>"$BATS_TEST_TMPDIR/mount.err" ||
	    skip "cannot mount a tmpfs here: $(head -1 "$BATS_TEST_TMPDIR/mount.err")"
	mounted=1
	export AGENTRT_DB=$mnt/db AGENTRT_CLOCK=2026-01-01T00:00:00Z
	events=$BATS_TEST_TMPDIR/events.ndjson
	: >"$events"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/echo.json"
}

teardown() {
	[ -z "${mounted:-}" ] || umount "$mnt"
}

# ring SEED RUN-ARGS...: one agentrt-session run on a ring of the mock
# model; status and output (the session's stderr) as `run` sets them.
ring() {
	local fifo=$BATS_TEST_TMPDIR/ring seed=$1
	shift
	rm -f "$fifo"
	mkfifo "$fifo"
	run timeout 60 bash -c '
		fifo=$1 seed=$2; shift 2
		agentrt-decide <"$fifo" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-llm 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-tool 2>>"$BATS_TEST_TMPDIR/stages.err" |
		AGENTRT_ID_SEED=$seed agentrt-session run \
		    --agents "$BATS_TEST_TMPDIR/agents" "$@" >"$fifo"
	' ring "$fifo" "$seed" "$@"
}

@test "a full disk fails the turn with no_space, and the session resumes once freed" {
	local i text n before
	ring 1 -a echo -s s1 -m hello
	[ "$status" -eq 0 ] || fail "first turn: $output"
	# Fill the file system; LMDB reuses its free pages a while, so turns
	# go on until one needs a page the disk cannot give.
	dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null || true
	for i in $(seq 2 40); do
		text="turn $i $(printf '%03000d' 0)"
		before=$(wc -l <"$events")
		ring "$i" -s s1 --events "$events" -m "$text"
		[ "$status" -eq 0 ] || break
	done
	[ "$status" -eq 1 ] || fail "no turn failed on a full disk ($status): $output"
	[[ "$output" == *"agentrt-session: "*" to store '$AGENTRT_DB': no space left on device"* ]] ||
	    fail "stderr: $output"
	[[ "$output" == *"session 's1' is as its last commit left it: free some space, then run again with -s s1"* ]] ||
	    fail "stderr: $output"
	[[ "$output" != *"Input/output error"* ]] || fail "stderr: $output"
	# The events of the failed run end with an error and the completion.
	run bash -c "tail -n +$((before + 1)) '$events' | tail -2 | jq -c '[.type, .code, .session_id, (.turn_id != null), (.message // .error | test(\"no space left on device\"))]'"
	assert_eq "$output" '["error","no_space","s1",true,true]
["completion","no_space","s1",true,true]'
	run agentrt-session show s1
	[ "$(jq -r .turn_status <<<"$output")" = running ] ||
	    fail "the failed turn is not left running: $output"
	rm "$mnt/filler"
	ring 99 -s s1 --events "$events"
	[ "$status" -eq 0 ] || fail "resume: $output"
	[ "$(tail -1 "$events" | jq -r '.type + " " + .status')" = \
	    "turn.finished completed" ] || fail "$(tail -3 "$events")"
	[ "$(jq -r 'select(.type == "completion" and .code == null) | .text' \
	    "$events" | tail -1)" = "$text" ] || fail "the turn's answer is not its echo"
	run agentrt-session show s1
	[ "$(jq -r .turn_status <<<"$output")" = completed ]
	# The log: every seq once, none missing, each message recorded once.
	run bash -c 'agentrt-session log s1 | jq -s -c "[map(.seq) == [range(1; length + 1)], ([.[] | select(.payload.type == \"message.new\") | .payload.message.content] | group_by(.) | map(length) | unique)]"'
	assert_eq "$output" '[true,[2]]'
	n=$(agentrt-session log s1 | jq -s "[.[] | select(.payload.type == \"message.new\" and .payload.message.content == \"$text\")] | length")
	assert_eq "$n" 2
}
