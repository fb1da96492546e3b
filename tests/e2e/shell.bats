#!/usr/bin/env bats
# shell.bats - agentrt-shell: one-shot turns, piped turns, and the REPL
# driven through a real pseudo-terminal (tests/helpers/pty.py)

load lib
bats_require_minimum_version 1.5.0

setup() {
	command -v python3 >/dev/null || skip "no python3"
	export AGENTRT_AGENTS="$AGENTS"
	PTY_LOG="$BATS_TEST_TMPDIR/pty.log"
	TOOLS=(--tools "$top_srcdir/examples/tools" --tools "$fixtures/tools")
}

# pty COMMAND...: runs COMMAND on a terminal, the steps read from stdin;
# sets status and output as run does, the whole transcript in $PTY_LOG.
pty() {
	run python3 "$top_srcdir/tests/helpers/pty.py" --log "$PTY_LOG" \
	    - -- "$@"
}

# The session of agent $1 (the newest one).
sid_of() {
	agentrt-session ls | jq -rs --arg a "$1" \
	    '[.[] | select(.agent_id == $a)] | sort_by(.created) | last | .id'
}

# The contents of the active path of session $1, as a JSON array.
contents() {
	agentrt-tree path "$1" | jq -sc 'map(.content)'
}

P='[0-9a-f]{8}> '

@test "--help lists every option and slash command; --version" {
	run agentrt-shell --help
	[ "$status" -eq 0 ] || fail "$output"
	for o in --db --agent --session --command --agents --tools --mcp \
	    --decide-jq --exec --url --model --record --replay --help \
	    --version /new /sessions /switch /tree /checkout /retry /edit \
	    /agent /model /tools /state /log /export /resume /help /quit; do
		[[ $output == *" $o"* ]] || fail "--help does not list $o"
	done
	run agentrt-shell --version
	assert_eq "${lines[0]}" "agentrt-shell $(agentrt-session --version | head -n 1 | cut -d' ' -f2)"
	v='[0-9]+\.[0-9]+(\.[0-9]+)?'
	[[ ${lines[1]} =~ ^libjq/$v\ libedit/$v$ ]] || fail "${lines[1]}"
	[ "${#lines[@]}" -eq 2 ]
}

@test "-c prints the reply and exits 0; the turn is in the store" {
	run agentrt-shell -a calc "${TOOLS[@]}" -c 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" "17*23 = 391"
	assert_eq "$(agentrt-session ls -q | wc -l)" 1
	assert_eq "$(contents "$(sid_of calc)")" \
	    '["What is 17*23?",null,"391","17*23 = 391"]'
}

@test "-c: a failing turn exits 1 and says why on stderr, nothing on stdout" {
	run --separate-stderr agentrt-shell -a echo --decide-jq \
	    'if .trigger.type == "client.messages" then {actions: [{type: "message.send", session_id: .session_id}]} else .proposed end' \
	    -c hi
	[ "$status" -eq 1 ] || fail "status $status: $output $stderr"
	assert_eq "$output" ""
	assert_eq "$stderr" "agentrt-shell: error: message.send needs session_id and a message"
}

@test "usage errors and an unknown agent exit 2; an unknown session is one line, exit 1" {
	run agentrt-shell --bogus
	[ "$status" -eq 2 ] && [[ $output == *"usage: agentrt-shell"* ]] || fail "$output"
	run agentrt-shell -a echo -c hi extra
	[ "$status" -eq 2 ] && [[ $output == *"-c TEXT and a PROMPT: give one"* ]] || fail "$output"
	run agentrt-shell -a echo --lines extra
	[ "$status" -eq 2 ] || fail "status $status: $output"
	assert_eq "$output" "agentrt-shell: --lines reads the turns from the standard input: give no PROMPT or -c"
	run agentrt-shell -a echo --lines -c hi
	[ "$status" -eq 2 ] || fail "status $status: $output"
	run agentrt-shell -a echo '  ' </dev/null
	[ "$status" -eq 2 ] || fail "status $status: $output"
	assert_eq "$output" "agentrt-shell: nothing to send: the PROMPT is empty"
	run agentrt-shell -a echo -s x -c hi
	[ "$status" -eq 2 ] && [[ $output == *"-a, -s and -C: give one"* ]] || fail "$output"
	run agentrt-shell -C -s x hi
	[ "$status" -eq 2 ] && [[ $output == *"-a, -s and -C: give one"* ]] || fail "$output"
	run agentrt-shell -a nosuch -c hi
	[ "$status" -eq 2 ] || fail "status $status"
	[[ $output == "agentrt-shell: no agent 'nosuch' (looked in "* ]] || fail "$output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	run agentrt-shell -s 0190nosuch -c hi
	[ "$status" -eq 1 ] || fail "status $status"
	assert_eq "$output" "agentrt-shell: no session '0190nosuch'"
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
	run agentrt-shell -a echo --decide-jq . --exec cat -c hi
	[ "$status" -eq 2 ] && [[ $output == *"--decide-jq, --exec and --url: give one"* ]] || fail "$output"
}

@test "-c: a stage that cannot start ends the ring; the turn is cancelled, the next one runs" {
	run agentrt-shell -m bogus/x -a echo -c first
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ $output == *"the ring stopped before the turn ended; the turn is cancelled"* ]] || fail "$output"
	sid=$(agentrt-session ls -q)
	assert_eq "$(agentrt-session show "$sid" | jq -r .status)" idle
	run agentrt-shell -s "$sid" -c second
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" second
}

@test "-c on an approval exits 3 and says how to go on" {
	run agentrt-shell -a guarded "${TOOLS[@]}" -c go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	iid=$(agentrt-session show "$(the_session)" | jq -r '.interrupts | keys[0]')
	[[ $output == *"is waiting: approval required: calc; resume it in the REPL"*"--resume $iid --payload '{\"approved\":true}'"* ]] || fail "$output"
	# One recipe: the ring's own "is parked" line is not shown too.
	assert_eq "$(grep -c -- '--resume' <<<"$output")" 1
	[[ $output != *"is parked on interrupt"* ]] || fail "$output"
}

@test "piped stdin with --lines: one turn per line, two replies, one session" {
	run agentrt-shell -a echo --lines < <(printf 'to Paris\nbook it\n')
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" $'to Paris\nbook it'
	assert_eq "$(agentrt-session ls -q | wc -l)" 1
	assert_eq "$(contents "$(the_session)")" \
	    '["to Paris","to Paris","book it","book it"]'
}

@test "a PROMPT and -m with no agent file: the built-in chat agent, a new session each time" {
	run --separate-stderr agentrt-shell -m mock/echo 'hello there' </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" 'hello there'
	# Nothing but the reply: no session id, no notice.
	assert_eq "$stderr" ''
	run --separate-stderr agentrt-shell -m mock/echo how are you </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" 'how are you'
	assert_eq "$(agentrt-session ls | jq -sc 'map(.agent_id)')" '["chat","chat"]'
	sid=$(sid_of chat)
	assert_eq "$(agentrt-session show "$sid" | jq -c .config)" '{"model":"mock/echo"}'
	assert_eq "$(contents "$sid")" '["how are you","how are you"]'
	# No file of the built-in agent is left behind.
	run ls "$BATS_TEST_TMPDIR"
	[[ $output != *agentrt-shell.* ]] || fail "left: $output"
}

@test "a session of the built-in agent stays one: -S and /new make the next on its model" {
	agentrt-shell -m mock/echo 'first' </dev/null >/dev/null
	# No -a, no -m: -S starts a new session of the newest one's agent,
	# which has no file.
	run --separate-stderr agentrt-shell -S 'Be brief.' -c second </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" second
	assert_eq "$(agentrt-session ls | jq -sc 'map(.agent_id)')" '["chat","chat"]'
	assert_eq "$(agentrt-session show "$(sid_of chat)" | jq -c '.config')" '{"model":"mock/echo","system":"Be brief."}'
	pty agentrt-shell -C <<-EOF
	expect chat $P
	send /new\r
	expect new session of chat
	send third\r
	expect third
	expect chat $P
	send /quit\r
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session ls -q | wc -l)" 3
	assert_eq "$(contents "$(sid_of chat)")" '["third","third"]'
}

@test "-m with --tools: the built-in agent offers every tool that can run, and calls them" {
	run agentrt-shell -m mock/echo "${TOOLS[@]}" 'which tools?' </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $output"
	sid=$(sid_of chat)
	assert_eq "$(agentrt-session show "$sid" | jq -c '[.config.tools[].name]')" \
	    "$(agentrt-tool "${TOOLS[@]}" --list | jq -sc 'map(.name)')"
	assert_eq "$(agentrt-session show "$sid" | jq -c '.config.tools[] | select(.name == "calc") | .input.required')" '["expr"]'
	# The model sees them: the request it was sent declares them.
	assert_eq "$(agentrt-session log "$sid" | jq -c 'select(.payload.type == "llm.call.requested") | [.payload.request.tools[]?.name] | index("calc") != null')" true
}

@test "piped stdin is one message; with a PROMPT it goes first, a blank line between" {
	run agentrt-shell -m mock/echo < <(printf 'to Paris\nbook it\n')
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" $'to Paris\nbook it'
	assert_eq "$(contents "$(sid_of chat)")" '["to Paris\nbook it","to Paris\nbook it"]'
	run agentrt-shell -m mock/echo sum up < <(printf 'milk\neggs\n')
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" $'milk\neggs\n\nsum up'
	assert_eq "$(agentrt-session ls -q | wc -l)" 2
	run --separate-stderr agentrt-shell -m mock/echo </dev/null
	[ "$status" -eq 2 ] || fail "status $status: $stderr"
	assert_eq "$stderr" 'agentrt-shell: nothing to send: the standard input is empty (give a PROMPT)'
	assert_eq "$(agentrt-session ls -q | wc -l)" 2
}

@test "nothing named: a PROMPT says how to name an agent or a model, and no agent is picked; -C continues the newest" {
	# Agents are on the path ($AGENTRT_AGENTS), and none is taken.
	run --separate-stderr agentrt-shell 'hi' </dev/null
	[ "$status" -eq 2 ] || fail "status $status: $stderr"
	assert_eq "$stderr" 'agentrt-shell: no agent: name one with -a AGENT, or a model with -m MODEL (-m mock/echo needs no key; a default "model" goes in $XDG_CONFIG_HOME/agentrt/config.json), or continue the most recent session with -C'
	run --separate-stderr agentrt-shell -c 'hi' </dev/null
	[ "$status" -eq 2 ] || fail "status $status: $stderr"
	[[ $stderr == 'agentrt-shell: no agent: name one with -a AGENT'* ]] || fail "$stderr"
	run --separate-stderr agentrt-shell -C 'hi' </dev/null
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	assert_eq "$stderr" 'agentrt-shell: no session to continue (-C): start one with -a AGENT or -m MODEL'
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
	agentrt-shell -a echo 'to Paris' </dev/null >/dev/null
	sid=$(sid_of echo)
	run agentrt-shell -C 'book it' </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" 'book it'
	assert_eq "$(agentrt-session ls -q)" "$sid"
	assert_eq "$(contents "$sid")" '["to Paris","to Paris","book it","book it"]'
	# A PROMPT with -a starts a new session, as llm(1) does.
	agentrt-shell -a echo 'again' </dev/null >/dev/null
	assert_eq "$(agentrt-session ls -q | wc -l)" 2
}

@test "config.json: a default model for a prompt with nothing named, and aliases for -m" {
	mkdir -p "$XDG_CONFIG_HOME/agentrt"
	echo '{"model": "mock/echo", "aliases": {"parrot": "mock/echo"}}' \
	    >"$XDG_CONFIG_HOME/agentrt/config.json"
	run --separate-stderr agentrt-shell 'hello there' </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" 'hello there'
	assert_eq "$(agentrt-session show "$(sid_of chat)" | jq -c .config)" '{"model":"mock/echo"}'
	run --separate-stderr agentrt-shell -m parrot 'once more' </dev/null
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	assert_eq "$output" 'once more'
	assert_eq "$(agentrt-session ls | jq -sc 'map(.agent_id)')" '["chat","chat"]'
	assert_eq "$(agentrt-session show "$(sid_of chat)" | jq -r .config.model)" mock/echo
	# A file with a mistake stops the shell before anything runs.
	echo '{"modle": "mock/echo"}' >"$XDG_CONFIG_HOME/agentrt/config.json"
	run --separate-stderr agentrt-shell -m mock/echo hi </dev/null
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	assert_eq "$stderr" "agentrt-shell: $XDG_CONFIG_HOME/agentrt/config.json: unknown key 'modle' (it may hold model and aliases)"
	echo '{"aliases": {"fast": "gpt-4o"}}' >"$XDG_CONFIG_HOME/agentrt/config.json"
	run --separate-stderr agentrt-shell -m mock/echo hi </dev/null
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	assert_eq "$stderr" "agentrt-shell: $XDG_CONFIG_HOME/agentrt/config.json: aliases.fast: expected a model, provider/name"
	assert_eq "$(agentrt-session ls -q | wc -l)" 2
}

@test "REPL: a message shows the streamed reply and the usage line" {
	# A cassette whose stream says other words than its reply, so the
	# screen shows which of the two was drawn.
	tape="$BATS_TEST_TMPDIR/tape"
	agentrt-shell -a stream --record "$tape.0" -c 'hello there world' >/dev/null
	jq -c '.deltas = [{text: "from "}, {text: "the stream"}]' "$tape.0" >"$tape"
	pty agentrt-shell -a stream --replay "$tape" <<-EOF
	expect agents: .* stream,
	expect stream \(new\)> 
	send hello there world\r
	expect \r\nfrom the stream\r\n
	expect \[5 in · 5 out · \\\$0 · \d+ ms\]
	expect stream $P
	send \x04
	wait 0
	absent \nhello there world
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(sid_of stream)
	# The prompt names the session once it exists.
	grep -q "stream ${sid:0:8}> " "$PTY_LOG" || fail "$(cat "$PTY_LOG")"
	assert_eq "$(contents "$sid")" '["hello there world","hello there world"]'
}

@test "REPL: /sessions, /tree and /help; an unknown command says so" {
	agentrt-shell -a echo -c 'first words' >/dev/null
	sid=$(the_session)
	pty agentrt-shell -s "${sid:0:20}" <<-EOF
	expect session $sid \(echo\)
	expect echo $P
	send /sessions\r
	expect \* $sid  echo
	expect echo $P
	send /tree\r
	expect assistant [0-9a-f-]+ first words \(head\)
	expect echo $P
	send /help\r
	expect /checkout NODE +move the head to NODE
	expect echo $P
	send /frobnicate now\r
	expect unknown command '/frobnicate': /help lists them
	expect echo $P
	send /quit\r
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "REPL: -m with no agent is the built-in chat agent; /models lists the models, prices and aliases; /model takes an alias" {
	mkdir -p "$XDG_CONFIG_HOME/agentrt"
	echo '{"aliases": {"cheap": "openai/gpt-4o-mini"}}' \
	    >"$XDG_CONFIG_HOME/agentrt/config.json"
	pty agentrt-shell -m mock/echo <<-EOF
	expect new session of chat
	expect chat \(new\)> 
	send /models\r
	expect mock/echo +offline, free
	expect openai/gpt-4o-mini +\\\$0.15 in, \\\$0.6 out a million tokens
	expect cheap += openai/gpt-4o-mini
	expect chat \(new\)> 
	send /model cheap\r
	expect model: openai/gpt-4o-mini
	expect chat \(new\)> 
	send /model mock/echo\r
	expect model: mock/echo
	send hello there\r
	expect chat $P
	send /quit\r
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(contents "$(sid_of chat)")" '["hello there","hello there"]'
	# The catalogue is agentrt-llm's, as JSON lines: every model once.
	run agentrt-llm --models
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc 'map(.model) | .[0:3]' <<<"$output")" '["mock/echo","mock/script","anthropic/claude-3-5-haiku"]'
	assert_eq "$(jq -s 'map(.model) | unique | length' <<<"$output")" "$(wc -l <<<"$output")"
	assert_eq "$(jq -c 'select(.model == "openai/gpt-4o") | .pricing' <<<"$output")" \
	    '{"input_per_million_tokens":2.5,"output_per_million_tokens":10,"cache_read_per_million_tokens":1.25,"cache_write_per_million_tokens":2.5}'
	echo '{"openai/new-model": {"input": "1", "output": "2"}}' >"$BATS_TEST_TMPDIR/prices.json"
	run agentrt-llm --models --prices "$BATS_TEST_TMPDIR/prices.json"
	[[ $output == *'"model":"openai/new-model","model_id":"new-model","provider":"openai"'* ]] || fail "$output"
	echo '{"openai/x": {"input": "one"}}' >"$BATS_TEST_TMPDIR/prices.json"
	run agentrt-llm --models --prices "$BATS_TEST_TMPDIR/prices.json"
	[ "$status" -eq 2 ] || fail "status $status: $output"
}

@test "REPL: help, clear and exit typed bare do what they say; a misspelt command gets a guess" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send /hepl\r
	expect unknown command '/hepl': did you mean /help\?
	expect echo \(new\)> 
	send /frobnicate\r
	expect unknown command '/frobnicate': /help lists them
	expect echo \(new\)> 
	send help\r
	expect /checkout NODE +move the head to NODE
	expect echo \(new\)> 
	send   clear \r
	expect \x1b\[H\x1b\[2J
	expect echo \(new\)> 
	send exit\r
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	# None of them went to the model: no session was made.
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
}

@test "REPL: a reply is drawn from its Markdown on a terminal; NO_COLOR and --color=never show it raw" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send **bold** and \`code\`\r
	expect \x1b\[1mbold\x1b\[22m and \x1b\[36mcode\x1b\[39m
	expect echo $P
	send /quit\r
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	for how in "env NO_COLOR=1" "env"; do
		pty $how agentrt-shell -a echo $([ "$how" = env ] && echo --color=never) <<-EOF
		expect echo \(new\)> 
		send **raw** text\r
		expect \*\*raw\*\* text
		expect echo $P
		send /quit\r
		wait 0
		EOF
		[ "$status" -eq 0 ] || fail "$how: $output"
	done
}

@test "--color: always draws a piped reply's Markdown, never and auto (piped) do not; a bad value is refused" {
	run agentrt-shell -m mock/echo --color=always '# Title' </dev/null
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$output" $'\e[1m\e[4mTitle\e[0m'
	run agentrt-shell -m mock/echo --color=never '# Title' </dev/null
	assert_eq "$output" '# Title'
	run agentrt-shell -m mock/echo '# Title' </dev/null
	assert_eq "$output" '# Title'
	run agentrt-shell -m mock/echo --color=sometimes hi </dev/null
	[ "$status" -eq 2 ] || fail "status $status: $output"
	assert_eq "$output" "agentrt-shell: bad --color 'sometimes': use auto, always or never"
}

@test "REPL: with neither -a nor -s it continues the newest session" {
	agentrt-shell -a echo -c one >/dev/null
	agentrt-shell -a stream -c two >/dev/null
	sid=$(sid_of stream)
	pty agentrt-shell <<-EOF
	expect session $sid \(stream\)
	expect stream $P
	send three\r
	expect stream $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(contents "$sid")" '["two","two","three","three"]'
}

@test "REPL: tab completes a slash command" {
	agentrt-shell -a echo -c 'tabbed' >/dev/null
	pty agentrt-shell -s "$(the_session)" <<-EOF
	expect echo $P
	send /tr\t
	sleep 0.3
	send \r
	expect assistant [0-9a-f-]+ tabbed \(head\)
	expect echo $P
	send /new ech\t
	sleep 0.3
	send \r
	expect new session of echo: it starts with your next message
	expect echo \(new\)> 
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "REPL: /retry makes a sibling reply under the same user message" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send say it twice\r
	expect echo $P
	send /retry\r
	expect \r\nsay it twice\r\n
	expect echo $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(the_session)
	assert_eq "$(agentrt-tree branches "$sid" | jq -sc 'map(.text)')" \
	    '["say it twice","say it twice"]'
	# Both replies hang under the one user message.
	assert_eq "$(agentrt-session log "$sid" | jq -sc '[.[].payload |
	    select(.type == "message.new")] | map(.parent_id) | .[1:] | unique | length')" 1
	assert_eq "$(agentrt-tree path "$sid" | jq -sc 'length')" 2
}

@test "REPL: /edit pre-fills the last message and forks; /edit TEXT too" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send to Paris\r
	expect echo $P
	send /edit\r
	expect edit> 
	send  and Rome\r
	expect \r\nto Paris and Rome\r\n
	expect echo $P
	send /edit LA instead\r
	expect \r\nLA instead\r\n
	expect echo $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(the_session)
	assert_eq "$(contents "$sid")" '["LA instead","LA instead"]'
	assert_eq "$(agentrt-tree branches "$sid" | jq -sc 'map(.text) | sort')" \
	    '["LA instead","to Paris","to Paris and Rome"]'
}

@test "REPL: an approval answered y runs the tool; n denies it" {
	pty agentrt-shell -a guarded "${TOOLS[@]}" <<-EOF
	expect guarded \(new\)> 
	send go\r
	expect → calc \{"expr":"6\*7"\}
	expect Allow calc \{"expr":"6\*7"\}\? \[y/n\] 
	send y\r
	expect ← calc: 42
	expect calc said: 42
	expect guarded $P
	send go\r
	expect \[y/n\] 
	send n\r
	expect calc said: the user did not approve calc: denied in the shell
	expect guarded $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(the_session)
	# Approved, the tool ran once; denied, it never ran.
	assert_eq "$(agentrt-session log "$sid" | jq -sc '[.[].payload.type |
	    select(startswith("tool.call.") and . != "tool.call.requested" and
	    . != "tool.call.held")]')" \
	    '["tool.call.approved","tool.call.dispatched","tool.call.completed","tool.call.errored"]'
	assert_eq "$(agentrt-session show "$sid" | jq -c '.interrupts')" '{}'
}

@test "REPL: an ask_user question is asked with its options and answered" {
	pty agentrt-shell -a asker <<-EOF
	expect asker \(new\)> 
	send go\r
	expect Which colour\?\r\n  1\. red\r\n  2\. blue
	expect answer> 
	send 2\r
	expect colour: {"choice":"blue"}
	expect asker $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session log "$(the_session)" | jq -sc '[.[].payload |
	    select(.type == "tool.call.completed") | .result | fromjson]')" '[{"choice":"blue"}]'
}

@test "REPL: history is kept across runs; up-arrow recalls the last line" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send remember me\r
	expect echo $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	hist="$XDG_STATE_HOME/agentrt/history"
	[ -f "$hist" ] || fail "no history file"
	grep -q 'remember' "$hist" || fail "$(cat "$hist")"
	pty agentrt-shell -a stream <<-EOF
	expect stream \(new\)> 
	send \x1b[A
	sleep 0.3
	send \r
	expect stream $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(contents "$(sid_of stream)")" '["remember me","remember me"]'
}

@test "REPL: Ctrl-C stops a turn, leaves no stage behind, and the shell goes on" {
	# A tools path of this test's own names its ring's processes.
	ln -s "$fixtures/tools" "$BATS_TEST_TMPDIR/tools"
	pty agentrt-shell -a slow --tools "$BATS_TEST_TMPDIR/tools" <<-EOF
	expect slow \(new\)> 
	send hi\r
	expect → nap
	sendnow \x03
	expect \[stopped\]
	expect slow $P
	send /sessions\r
	expect slow +idle
	expect slow $P
	send again\r
	expect \[[0-9]+ in
	expect slow $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" != *turn_already_active* ]] || fail "$output"
	# The stop is one line, [stopped]: not the cancelled turn's error,
	# its usage line and the ring's "interrupted" besides.
	! grep -q 'error: cancelled' "$PTY_LOG" || fail "$(cat "$PTY_LOG")"
	! grep -q 'interrupted (SIG' "$PTY_LOG" || fail "$(cat "$PTY_LOG")"
	assert_eq "$(grep -c 'stopped' "$PTY_LOG")" 1
	run pgrep -f "$BATS_TEST_TMPDIR/tools"
	[ "$status" -ne 0 ] || fail "a stage is still running: $(ps -fp ${output//$'\n'/,})"
	# The stopped turn was cancelled: it ended, failed, saying so, and
	# nothing of it is left running.
	assert_eq "$(agentrt-session log "$(sid_of slow)" | jq -sc '[.[].payload |
	    select(.type == "turn.completed") | .error]')" '["cancelled",null]'
	assert_eq "$(agentrt-session show "$(sid_of slow)" | jq -c '[.status, (.open | length)]')" '["idle",0]'
}

@test "-c stopped by SIGINT: exit 130 and one line saying so" {
	ln -s "$fixtures/tools" "$BATS_TEST_TMPDIR/tools"
	agentrt-shell -a slow --tools "$BATS_TEST_TMPDIR/tools" -c hi \
	    </dev/null >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	# Once its tool runs, the turn is under way.
	for i in $(seq 1 100); do
		pgrep -f "$BATS_TEST_TMPDIR/tools/nap" >/dev/null && break
		sleep 0.1
	done
	kill -INT "$pid"
	st=0
	wait "$pid" || st=$?
	assert_eq "$st" 130
	assert_eq "$(cat "$BATS_TEST_TMPDIR/err")" "agentrt-shell: stopped: the turn of session '$(sid_of slow)' is cancelled"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/out")" ''
}

@test "REPL: Ctrl-C at the prompt clears the line; Ctrl-D exits 0" {
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send never sent\x03
	expect echo \(new\)> 
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session ls -q | wc -l)" 0
}

@test "NO_COLOR=1 gives no colour; a terminal without it does" {
	pty env NO_COLOR=1 agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send plain\r
	expect \[\d+ in
	expect echo $P
	send /nope\r
	expect unknown command
	expect echo $P
	send \x04
	wait 0
	absent \x1b\[[0-9;]*m
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	pty agentrt-shell -a echo <<-EOF
	expect echo \(new\)> 
	send coloured\r
	expect \x1b\[2m\[\d+ in
	expect echo $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "REPL: /switch, /checkout, /export, /agent, /model, /tools, /state, /resume" {
	agentrt-shell -a echo -c 'older' >/dev/null
	old=$(the_session)
	first=$(agentrt-tree path "$old" | jq -rs '.[0].id')
	pty env NO_COLOR=1 agentrt-shell -a calc "${TOOLS[@]}" <<-EOF
	expect calc \(new\)> 
	send What is 17*23?\r
	expect → calc \{"expr":"17\*23"\}\r\n
	expect ← calc: 391
	expect 17\*23 = 391
	expect calc $P
	send /agent\r
	expect calc: mock/script
	expect calc $P
	send /tools\r
	expect calc +Evaluate an integer arithmetic expression
	expect calc $P
	send /model mock/echo\r
	expect model: mock/echo
	expect calc $P
	send /state\r
	expect : idle, last turn completed\r\nno state
	expect calc $P
	send /resume\r
	expect has no open interrupt
	expect calc $P
	send /export $BATS_TEST_TMPDIR/t.md\r
	expect wrote .*t\.md
	expect calc $P
	send /switch ${old:0:13}\r
	expect session $old \(echo\)
	expect echo $P
	send /checkout ${first:0:30}\t
	sleep 0.3
	send \r
	expect head moved to
	expect echo $P
	send /quit\r
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx '17\*23 = 391' "$BATS_TEST_TMPDIR/t.md" || fail "$(cat "$BATS_TEST_TMPDIR/t.md")"
	# /checkout completed the old session's first node, the user message.
	assert_eq "$(agentrt-session show "$old" | jq -r .head)" "$first"
}

@test "REPL: a sub-agent's lines are prefixed by its agent" {
	pty env NO_COLOR=1 agentrt-shell -a boss <<-EOF
	expect boss \(new\)> 
	send go\r
	expect \[(alpha|beta)\] (alpha|beta) got
	expect combined: 
	expect boss $P
	send \x04
	wait 0
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	grep -q '\[alpha\] alpha got first' "$PTY_LOG" || fail "$(cat "$PTY_LOG")"
	grep -q '\[beta\] beta got second' "$PTY_LOG" || fail "$(cat "$PTY_LOG")"
}

@test "--events keeps each turn's events too, as the session wrote them or as AG-UI's" {
	run agentrt-shell -a calc "${TOOLS[@]}" -c 'What is 17*23?' \
	    --events "$BATS_TEST_TMPDIR/ev.ndjson"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$output" '17*23 = 391'
	assert_eq "$(jq -r 'select(.type == "completion") | .text' "$BATS_TEST_TMPDIR/ev.ndjson")" '17*23 = 391'
	assert_eq "$(jq -r .type "$BATS_TEST_TMPDIR/ev.ndjson" | head -1)" turn.started
	# Two turns in one file (appended), each a run of its own.
	printf 'What is 17*23?\nagain\n' | agentrt-shell --lines -a calc "${TOOLS[@]}" \
	    --events "$BATS_TEST_TMPDIR/ev.agui" --events-format ag-ui >/dev/null
	assert_eq "$(jq -r 'select(.type | startswith("RUN_")) | .type' "$BATS_TEST_TMPDIR/ev.agui" | paste -sd' ')" \
	    'RUN_STARTED RUN_FINISHED RUN_STARTED RUN_FINISHED'
	assert_eq "$(jq -sc 'map(select(.type == "TOOL_CALL_RESULT") | .content)' "$BATS_TEST_TMPDIR/ev.agui")" '["391","391"]'
	if command -v node >/dev/null && [ -d "${AGUI_DIR:-}/node_modules/@ag-ui/client" ]; then
		run node "$top_srcdir/tests/helpers/agui-check.mjs" <"$BATS_TEST_TMPDIR/ev.agui"
		[ "$status" -eq 0 ] || fail "$output"
	fi
}

@test "--events: a bad format, a format without a file, a file that cannot open" {
	run agentrt-shell -a calc -c hi --events "$BATS_TEST_TMPDIR/x" --events-format text
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-shell: bad --events-format 'text': use ndjson or ag-ui"
	run agentrt-shell -a calc -c hi --events-format ag-ui
	[ "$status" -eq 2 ]
	assert_eq "$output" 'agentrt-shell: --events-format goes with --events FILE'
	run agentrt-shell -a calc -c hi --events "$BATS_TEST_TMPDIR/no/such/dir"
	[ "$status" -eq 1 ]
	[[ $output == "agentrt-shell: open events '$BATS_TEST_TMPDIR/no/such/dir': No such file or directory" ]] || fail "$output"
	! agentrt-session ls -q | grep -q .
}
