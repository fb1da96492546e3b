#!/usr/bin/env bats
# agentrt-shell-input.bats - what a person types into agentrt-shell and
# gets wrong: text piped to -c, -S, /resume, Ctrl-C at a question, Ctrl-D,
# Tab, the agents line, a misspelt agent.  The REPL runs on a real
# pseudo-terminal (tests/helpers/pty.py).

load lib
bats_require_minimum_version 1.5.0

setup() {
	command -v python3 >/dev/null || skip "no python3"
	export AGENTRT_AGENTS="$fixtures/agents:$top_srcdir/examples/agents"
	PTY_LOG="$BATS_TEST_TMPDIR/pty.log"
	TOOLS=(--tools "$top_srcdir/examples/tools" --tools "$fixtures/tools")
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	stop_server
}

# pty COMMAND...: runs COMMAND on a terminal, the steps read from stdin;
# sets status and output as run does, the whole transcript in $PTY_LOG.
pty() {
	run python3 "$top_srcdir/tests/helpers/pty.py" --log "$PTY_LOG" \
	    - -- "$@"
}

# The newest session (the store's last by creation).
newest() {
	agentrt-session ls | jq -rs 'sort_by(.created) | last | .id'
}

# The user messages of session $1, as a JSON array.
user_texts() {
	agentrt-tree path "$1" | jq -sc 'map(select(.role == "user") | .content)'
}

P='[0-9a-f]{8}> '

@test "-c: text piped in comes before the prompt, as llm sends it" {
	run --separate-stderr agentrt-shell -a echo -c summarise \
	    < <(printf 'line one\n  line two\n\n')
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" $'line one\n  line two\n\nsummarise'
	assert_eq "$(user_texts "$(newest)")" '["line one\n  line two\n\nsummarise"]'
	# Nothing piped: the prompt alone.
	run agentrt-shell -a echo -c alone </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" alone
}

@test "-c: a terminal on stdin is not read" {
	pty agentrt-shell -a echo -c 'just this' <<-EOF
	expect just this
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(user_texts "$(newest)")" '["just this"]'
}

@test "-c: piped text with a NUL byte is a usage error, and nothing is sent" {
	run --separate-stderr agentrt-shell -a echo -c hi < <(printf 'a\0b')
	[ "$status" -eq 2 ] || fail "status $status: $stderr"
	assert_eq "$stderr" "agentrt-shell: the text piped to -c holds a NUL byte: send text, not a binary file"
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
}

@test "-S: the new session's config and its model calls carry the system prompt" {
	run agentrt-shell -a echo -S 'You are terse.' -c hi </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" hi
	sid=$(newest)
	assert_eq "$(agentrt-session show "$sid" | jq -r '.config.system')" 'You are terse.'
	assert_eq "$(agentrt-session log "$sid" | jq -sc '[.[].payload |
	    select(.type == "llm.call.requested") | .request.messages[0]]')" \
	    '[{"role":"system","content":"You are terse."}]'
	# The agent file itself is untouched, and no copy is left behind.
	assert_eq "$(jq -r .system "$fixtures/agents/echo.json")" 'Repeat after the user.'
	run ls "$BATS_TEST_TMPDIR"
	[[ $output != *agentrt-shell.* ]] || fail "left: $output"
}

@test "-S starts a new session rather than continue the newest; with -s it is a usage error" {
	agentrt-shell -a echo -c first </dev/null >/dev/null
	old=$(newest)
	run agentrt-shell -S 'Be brief.' -c second </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(agentrt-session ls -q | wc -l)" 2
	new=$(newest)
	[ "$new" != "$old" ] || fail "continued $old"
	assert_eq "$(agentrt-session show "$new" | jq -r '[.agent_id, .config.system] | join(" ")')" 'echo Be brief.'
	run agentrt-shell -s "$old" -S x -c hi
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[[ ${lines[0]} == "agentrt-shell: -S and -s: -S starts a new session; a session keeps the system prompt it began with" ]] || fail "$output"
}

@test "a misspelt agent exits 2, as in the ring, naming it and where it looked" {
	run --separate-stderr agentrt-shell -a cacl -c hi
	[ "$status" -eq 2 ] || fail "status $status: $stderr"
	[[ $stderr == "agentrt-shell: no agent 'cacl' (looked in $fixtures/agents, $top_srcdir/examples/agents, "*"); did you mean 'calc'?" ]] || fail "$stderr"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "$stderr"
	# Nothing near: no guess.
	run --separate-stderr agentrt-shell -a zzzzzz -c hi
	[ "$status" -eq 2 ] || fail "status $status: $stderr"
	[[ $stderr == *"agents)" ]] || fail "$stderr"
	run agentrt-session run -a cacl </dev/null
	[ "$status" -eq 2 ] || fail "the ring's status changed: $status"
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
}

# An agent on the test server's OpenAI API that parks on the first
# failure (no retries); the server fails its first request, then answers.
failing_once() {
	start_server
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	jq -n '{model: "openai/mock-model", retry: {timeout_secs: 20,
	    max_retries: 0, backoff_base_secs: 0, backoff_max_secs: 0}}' \
	    >"$BATS_TEST_TMPDIR/agents/once.json"
	export OPENAI_API_KEY=sk-fake-test-key-000
	export OPENAI_BASE_URL="$srv/seq/openai/error-500-server-error.json,chat-nonstream-text.json/v1"
}

@test "REPL: a failed call parks with /resume and its id; /resume x is refused and cancels nothing" {
	failing_once
	pty agentrt-shell --agents "$BATS_TEST_TMPDIR/agents" -a once <<-EOF
	expect once \(new\)> 
	send hi\r
	expect waiting: llm call failed: [^\r]*; /resume [0-9a-f-]{36} calls the model again
	expect once $P
	send /resume x\r
	expect /resume: the payload is not JSON \([^\r]*\); nothing was resumed: [0-9a-f-]{36} still waits
	expect once $P
	send /quit\r
	wait 0
	absent --payload JSON
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(newest)
	iid=$(agentrt-session show "$sid" | jq -r '.interrupts | keys[0]')
	[ "$iid" != null ] || fail "the interrupt is gone: $(agentrt-session show "$sid")"
	grep -q "/resume $iid calls the model again" "$PTY_LOG" || fail "$(cat "$PTY_LOG")"
	assert_eq "$(agentrt-session show "$sid" | jq -r .status)" running
	assert_eq "$(agentrt-session log "$sid" | jq -sc '[.[].payload |
	    select(.type == "turn.completed")] | length')" 0
}

@test "REPL: /resume with no payload retries a failed call, which then answers" {
	failing_once
	pty agentrt-shell --agents "$BATS_TEST_TMPDIR/agents" -a once <<-EOF
	expect once \(new\)> 
	send hi\r
	expect calls the model again
	expect once $P
	send /resume\r
	expect Galaxy Day
	expect once $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(newest)
	assert_eq "$(agentrt-session show "$sid" | jq -c '[.status, .interrupts]')" '["idle",{}]'
	assert_eq "$(grep -c chat/completions "$srv_log")" 2
}

@test "REPL: Ctrl-C at the approval question cancels the turn, says so, and the next message runs" {
	pty env NO_COLOR=1 agentrt-shell -a guarded "${TOOLS[@]}" <<-EOF
	expect guarded \(new\)> 
	send go\r
	expect Allow calc \{"expr":"6\*7"\}\? \[y/n\] 
	send \x03
	expect \[stopped: calc was not run; the turn is cancelled\]
	expect guarded $P
	send go\r
	expect \[y/n\] 
	send y\r
	expect calc said: 42
	expect guarded $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	[[ $output != *turn_already_active* && $output != *interrupted* ]] || fail "$output"
	sid=$(newest)
	assert_eq "$(agentrt-session log "$sid" | jq -sc '[.[].payload |
	    select(.type == "turn.completed") | .error]')" '["cancelled",null]'
	# The tool ran once: for the second turn only.
	assert_eq "$(agentrt-session log "$sid" | jq -sc '[.[].payload |
	    select(.type == "tool.call.completed")] | length')" 1
	assert_eq "$(agentrt-session show "$sid" | jq -c '[.status, .interrupts]')" '["idle",{}]'
}

@test "REPL: Ctrl-C at an ask_user question cancels the turn too" {
	pty env NO_COLOR=1 agentrt-shell -a asker <<-EOF
	expect asker \(new\)> 
	send go\r
	expect answer> 
	send \x03
	expect \[stopped: the question was not answered; the turn is cancelled\]
	expect asker $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session show "$(newest)" | jq -c '[.status, .interrupts]')" '["idle",{}]'
}

@test "REPL: Ctrl-D leaves without echoing ^D; mid-line it deletes a character" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send abc\x02\x02\x04\r
	expect \r\nac\r\n
	expect echo $P
	send \x04
	wait 0
	absent \^D
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(user_texts "$(newest)")" '["ac"]'
}

@test "REPL: Tab twice lists the completions once" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send /\t
	expect /quit
	send \t
	sleep 0.3
	send \x15\x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(grep -c '/new  /sessions' "$PTY_LOG")" 1
}

@test "REPL: the agents line wraps between names to the terminal's width" {
	mkdir agents
	names=()
	for i in $(seq 1 12); do
		names+=("agent-number-$i")
		echo '{"model": "mock/echo"}' >"agents/agent-number-$i.json"
	done
	AGENTRT_AGENTS= pty sh -c 'stty cols 40 rows 24; exec agentrt-shell --agents agents -a agent-number-1' <<-EOF
	expect new session of
	expect \(new\)> 
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	block=$(tr -d '\r' <"$PTY_LOG" | sed -n '/^agents: /,/^new session/p' | sed '$d')
	[ "$(printf '%s\n' "$block" | wc -l)" -gt 1 ] || fail "not wrapped: $block"
	while IFS= read -r line; do
		[ "${#line}" -lt 40 ] || fail "too wide (${#line}): '$line'"
	done <<<"$block"
	# Every name whole, in order: no line breaks inside one.
	got=$(printf '%s\n' "$block" | sed 's/^agents: //; s/^ *//' | tr '\n' ' ' |
	    tr -s ' ' | sed 's/ $//')
	want=$(printf '%s\n' "${names[@]}" | sort | paste -sd, | sed 's/,/, /g')
	assert_eq "$got" "$want"
}
