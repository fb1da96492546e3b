#!/usr/bin/env bats
# session-events-text.bats - agentrt-session run --events-format: NDJSON
# for programs, text (as agentrt-shell draws a turn) for people, chosen by
# whether the events file is a terminal

load lib
bats_require_minimum_version 1.5.0

setup() {
	export AGENTRT_AGENTS="$fixtures/agents:$top_srcdir/examples/agents"
	export AGENTRT_TOOLS="$top_srcdir/examples/tools:$fixtures/tools"
	RING="$BATS_TEST_TMPDIR/ring"
	OUT="$BATS_TEST_TMPDIR/ev"
	rm -f "$RING" && mkfifo "$RING"
}

# ring RUN-ARGS...: decide | llm | tool | session run RUN-ARGS over a
# fifo; status and output (every stage's stderr) as run sets them.
ring() {
	run --separate-stderr timeout 60 bash -c '
		fifo=$1; shift
		agentrt-decide <"$fifo" | agentrt-llm | agentrt-tool |
		    agentrt-session run "$@" >"$fifo"' ring "$RING" "$@"
}

# tty COMMAND: COMMAND (for sh -c) on a terminal; output is what the
# terminal showed, carriage returns taken out.
tty() {
	command -v script >/dev/null || skip "no script(1)"
	run bash -c 'script -qfec "$1" /dev/null | tr -d "\r"' tty "$1"
}

CALC="agentrt-decide <$BATS_TEST_TMPDIR/ring | agentrt-llm | agentrt-tool |
    agentrt-session run -a calc -m 'What is 17*23?'"

@test "the README's set-up command at a terminal ends with the turn as the shell draws it" {
	tty "$CALC --events /dev/stderr >$BATS_TEST_TMPDIR/ring"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	# The colour codes out, the lines in order: user, call, result, answer.
	text=$(printf '%s\n' "$output" | sed 's/\x1b\[[0-9;]*m//g' |
	    grep -v '^agentrt-session: session ')
	want='> What is 17*23?
→ calc {"expr":"17*23"}
← calc: 391
17*23 = 391'
	assert_eq "$(printf '%s\n' "$text" | head -4)" "$want"
	[[ $(printf '%s\n' "$text" | sed -n 5p) =~ ^\[[0-9]+\ in\ ·\ [0-9]+\ out\ ·\ \$0\ ·\ [0-9]+\ ms\]$ ]] ||
	    fail "no usage line: $text"
	[[ $output != *'"type"'* ]] || fail "JSON on the terminal: $output"
	# A terminal gets colour: the tool lines dim.
	[[ $output == *$'\e[2m→ calc'* ]] || fail "no colour: $output"
}

@test "NO_COLOR=1: text at a terminal without colour" {
	tty "export NO_COLOR=1; $CALC --events /dev/stderr >$BATS_TEST_TMPDIR/ring"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	[[ $output == *"← calc: 391"* ]] || fail "$output"
	[[ $output != *$'\e['* ]] || fail "colour with NO_COLOR: $output"
}

@test "--events-format ndjson at a terminal: one JSON object a line" {
	tty "$CALC --events /dev/stderr --events-format ndjson 2>&1 >$BATS_TEST_TMPDIR/ring | grep -v '^agentrt-session: session '"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	printf '%s\n' "$output" | jq -e -s 'length > 5 and
	    (map(.type) | index("completion") != null)' >/dev/null ||
	    fail "not NDJSON: $output"
}

@test "--events-format text to a file: the same text, no colour" {
	ring -a calc -m 'What is 17*23?' --events "$OUT" --events-format text
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	head -4 "$OUT" >"$OUT.head"
	printf '%s\n' '> What is 17*23?' '→ calc {"expr":"17*23"}' \
	    '← calc: 391' '17*23 = 391' | cmp - "$OUT.head" ||
	    fail "$(cat "$OUT")"
	grep -Eq '^\[[0-9]+ in · [0-9]+ out · \$0 · [0-9]+ ms\]$' "$OUT" ||
	    fail "$(cat "$OUT")"
	assert_eq "$(wc -l <"$OUT")" 5
	! grep -q $'\e' "$OUT" || fail "colour in a file"
}

@test "a file without --events-format gets NDJSON, as before" {
	ring -a calc -m 'What is 17*23?' --events "$OUT"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$(jq -rs 'map(select(.type == "completion"))[0].text' "$OUT")" \
	    "17*23 = 391"
}

@test "text: a parked turn says why; a sub-agent's lines carry its agent" {
	ring -a guarded -m go --events "$OUT" --events-format text
	[ "$status" -eq 3 ] || fail "status $status: $stderr"
	grep -Eq '^\[parked: approval required: calc \(interrupt [^ ]+\)\]$' "$OUT" ||
	    fail "$(cat "$OUT")"
	ring -a boss -m go --events "$OUT.boss" --events-format text
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	grep -q '^\[alpha\] alpha got first' "$OUT.boss" || fail "$(cat "$OUT.boss")"
	grep -q '^\[beta\] beta got second' "$OUT.boss" || fail "$(cat "$OUT.boss")"
}

@test "text: a refused input is in the file; not twice where stderr says it" {
	ring -a calc -m 'What is 17*23?' --events "$OUT"
	sid=$(agentrt-session ls -q)
	ring -s "$sid" --resume nosuch --events "$OUT.text" --events-format text
	[[ $stderr == *"no_interrupt: "* ]] || fail "$stderr"
	grep -q '^error: ' "$OUT.text" || fail "$(cat "$OUT.text")"
	tty "agentrt-decide <$RING | agentrt-llm | agentrt-tool | agentrt-session run -s $sid --resume nosuch --events /dev/stderr >$RING"
	assert_eq "$(printf '%s\n' "$output" | grep -c 'nosuch')" 1
}

@test "text: a turn a limit ended says why once at a terminal, and in a file" {
	tty "agentrt-decide <$RING | agentrt-llm | agentrt-tool | agentrt-session run -a lim-loops -m go --events /dev/stderr >$RING"
	assert_eq "$(printf '%s\n' "$output" | grep -c 'max_loops reached')" 1
	ring -a lim-loops -m go --events "$OUT" --events-format text
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	grep -q '^error: max_loops reached' "$OUT" || fail "$(cat "$OUT")"
}

@test "a bad --events-format is a usage error naming it; so is one without --events" {
	run --separate-stderr agentrt-session run -a calc -m hi --events "$OUT" \
	    --events-format xml </dev/null
	[ "$status" -eq 2 ] || fail "status $status"
	assert_eq "$stderr" "agentrt-session: bad --events-format 'xml': use ndjson, text or ag-ui"
	[ ! -e "$OUT" ] || fail "events written"
	run --separate-stderr agentrt-session run -a calc -m hi \
	    --events-format text </dev/null
	[ "$status" -eq 2 ] || fail "status $status"
	assert_eq "$stderr" "agentrt-session: run: --events-format goes with --events FILE"
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
}
