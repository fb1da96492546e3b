#!/usr/bin/env bats
# agentrt-shell-screen.bats - what agentrt-shell's screen shows during and
# after a turn: the spinner, -c streaming, /state and /log.  Terminals
# are real pseudo-terminals (tests/helpers/pty.py).

load lib
bats_require_minimum_version 1.5.0

setup() {
	command -v python3 >/dev/null || skip "no python3"
	AG="$BATS_TEST_TMPDIR/agents"
	mkdir -p "$AG"
	export AGENTRT_AGENTS="$AG:$fixtures/agents:$top_srcdir/examples/agents"
	# A model that answers after 1.5 s, long enough for the spinner.
	echo '{"model": "mock/script", "mock": {"script": [{"content": "late answer", "delay_ms": 1500}]}}' >"$AG/slowpoke.json"
	PTY_LOG="$BATS_TEST_TMPDIR/pty.log"
}

# pty COMMAND...: COMMAND on a terminal, the steps read from stdin; sets
# status and output as run does, the whole transcript in $PTY_LOG.
pty() {
	run python3 "$top_srcdir/tests/helpers/pty.py" --log "$PTY_LOG" \
	    - -- "$@"
}

P='[0-9a-f]{8}> '

@test "REPL: a spinner while the turn waits, erased before the reply" {
	pty env NO_COLOR=1 agentrt-shell -a slowpoke <<-EOF
	expect slowpoke \(new\)> 
	send hi\r
	expect \r[^\r\n]+ thinking [0-9]+s\x1b\[K
	expect \r\x1b\[Klate answer\r\n
	expect slowpoke $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "-c: a spinner and the reply at a terminal; a pipe gets the reply alone" {
	pty agentrt-shell -a slowpoke -c hi <<-EOF
	expect thinking [0-9]+s
	expect \r\x1b\[Klate answer\r\n
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	run --separate-stderr agentrt-shell -a slowpoke -c again
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" "late answer"
}

@test "-c streams the reply at a terminal; a pipe gets the final text" {
	# A cassette whose stream says other words than its reply, so the
	# screen shows which of the two was drawn.
	tape="$BATS_TEST_TMPDIR/tape"
	agentrt-shell -a stream --record "$tape.0" -c 'hello there world' >/dev/null
	jq -c '.deltas = [{text: "from "}, {text: "the stream"}]' "$tape.0" >"$tape"
	pty agentrt-shell -a stream --replay "$tape" -c 'hello there world' <<-EOF
	expect from the stream\r\n
	wait 0
	absent hello there world
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	run --separate-stderr agentrt-shell -a stream --replay "$tape" -c 'hello there world'
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" "hello there world"
}

@test "/state says there is none, else shows it as indented JSON" {
	pty env NO_COLOR=1 agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send hi\r
	expect echo $P
	send /state\r
	expect : idle, last turn completed\r\nno state
	expect echo $P
	send \x04
	wait 0
	absent null
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	pty env NO_COLOR=1 agentrt-shell -a echo --decide-jq \
	    'if .trigger.type == "client.messages" then .proposed + {state: {count: 1}} else .proposed end' <<-EOF
	expect echo \(new\)> 
	send hi\r
	expect echo $P
	send /state\r
	expect last turn completed\r\n\{\r\n  "count": 1\r\n\}\r\n
	expect echo $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "/log: one line an event; /log json as recorded; /log x is usage" {
	pty env NO_COLOR=1 agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send hello log\r
	expect echo $P
	send /log\r
	expect \r\n   1  [0-9]{2}:[0-9]{2}:[0-9]{2}  session\.created +\{"agent_id":"echo"
	expect \r\n +[0-9]+  [0-9:]{8}  message\.new +user: hello log\r\n
	expect \r\n +[0-9]+  [0-9:]{8}  turn\.completed
	expect echo $P
	send /log json\r
	expect \{"session_id":"[^"]+","seq":1,
	expect echo $P
	send /log x\r
	expect usage: /log \[json\]
	expect echo $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	# Without json no event is printed as JSON.
	sed -n '/\/log\r/,/\/log json/p' "$PTY_LOG" | grep -q '"seq"' &&
	    fail "raw events in /log: $(cat "$PTY_LOG")"
	true
}
