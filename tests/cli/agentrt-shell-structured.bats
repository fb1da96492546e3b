#!/usr/bin/env bats
# agentrt-shell-structured.bats - a structured answer in agentrt-shell: its
# table drawn, its follow-ups picked with /1, /2 ...  The REPL runs on a
# real pseudo-terminal (tests/helpers/pty.py), its stderr in a file.

load lib
bats_require_minimum_version 1.5.0

setup() {
	command -v python3 >/dev/null || skip "no python3"
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	export AGENTRT_AGENTS="$BATS_TEST_TMPDIR/agents:$fixtures/agents"
	PTY_LOG="$BATS_TEST_TMPDIR/pty.log"
	ERR="$BATS_TEST_TMPDIR/stderr"
	cd "$BATS_TEST_TMPDIR"
}

# pty ARGS...: agentrt-shell ARGS on a terminal, its stderr in $ERR, the
# steps read from stdin; sets status and output as run does.
pty() {
	run python3 "$top_srcdir/tests/helpers/pty.py" --log "$PTY_LOG" \
	    - -- sh -c 'exec agentrt-shell "$@" 2>"$0"' "$ERR" "$@"
}

newest() {
	agentrt-session ls | jq -rs 'sort_by(.created) | last | .id'
}

user_texts() {
	agentrt-tree path "$1" | jq -sc 'map(select(.role == "user") | .content)'
}

P='[0-9a-f]{8}> '

@test "/N with no answer says so on stderr and sends nothing" {
	pty -a echo <<-EOF
	expect \(new\)> 
	send hi\r
	expect $P
	send /1\r
	expect $P
	send /0\r
	expect $P
	send /help\r
	expect /N +send follow-up N of the last structured answer
	expect $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(cat "$ERR")" "agentrt-shell: no follow-up 1 (the last answer has 0)
agentrt-shell: no follow-up 0 (the last answer has 0)"
	assert_eq "$(user_texts "$(newest)")" '["hi"]'
}

@test "an answer's table is drawn, and /N sends its follow-up" {
	cat >agents/lister.json <<-'EOF'
	{"model": "mock/script", "answer": "structured",
	 "mock": {"script": [
	  {"json": {"summary": "Two files ({{user}}).", "columns": ["name", "size"],
	   "rows": [{"cells": ["a.txt", "3"]}, {"cells": ["b.txt", "12"]}],
	   "followups": ["Say hi", "Sort by size"]}}]}}
	EOF
	pty -a lister <<-EOF
	expect \(new\)> 
	send ls\r
	expect Two files \(ls\)\.
	expect name   size
	expect a\.txt  3
	expect b\.txt  12
	expect /1 Say hi
	expect /2 Sort by size
	expect $P
	send /3\r
	expect $P
	send /1\r
	expect ${P}Say hi
	expect Two files \(Say hi\)\.
	expect $P
	send /3\r
	expect $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(cat "$ERR")" "agentrt-shell: no follow-up 3 (the last answer has 2)
agentrt-shell: no follow-up 3 (the last answer has 2)"
	assert_eq "$(user_texts "$(newest)")" '["ls","Say hi"]'
	# The JSON was never drawn.
	! grep -q '"summary"' "$PTY_LOG" || fail "raw JSON on the screen"
}
