#!/usr/bin/env bats
# agentrt-tool: running executable and jq tools for tool.execute decisions

load lib

setup() {
	shopt -s lastpipe	# so "req ... | tool_run" sets $status here
	tools=$BATS_TEST_TMPDIR/tools
	examples=$top_srcdir/examples/tools
	mkdir -p "$tools"
	out=$BATS_TEST_TMPDIR/out
	err=$BATS_TEST_TMPDIR/err
}

# tool NAME: the script on stdin becomes the executable tool NAME.
tool() {
	cat >"$tools/$1"
	chmod +x "$tools/$1"
}

# req NAME ARGS [ID] [TRIGGER-EXTRA]: a decision.request to run tool NAME.
req() {
	jq -nc --arg n "$1" --arg a "$2" --arg id "${3:-c1}" \
	    --argjson x "${4:-"{}"}" '{type: "decision.request",
		session_id: "s1", decision_id: ("d-" + $id),
		trigger: ({type: "tool.execute", id: $id, name: $n,
		    arguments: $a, input: {}, attempt: 1} + $x)}'
}

# Runs agentrt-tool with the arguments given over stdin; stdout in $out,
# stderr in $err, the exit status in $status.
tool_run() {
	status=0
	agentrt-tool "$@" >"$out" 2>"$err" || status=$?
}

# line N of $out, 1-based.
line() {
	sed -n "${1}p" "$out"
}

# Waits up to 5 s for pid to stop running (a zombie that no init reaps
# has stopped too).
gone() {
	local i st
	for i in $(seq 1 100); do
		st=$(ps -o stat= -p "$1" 2>/dev/null) || return 0
		[[ $st == Z* ]] && return 0
		sleep 0.05
	done
	fail "process $1 is still running"
}

@test "--help prints the usage and the options on stdout and exits 0" {
	run agentrt-tool --help
	[ "$status" -eq 0 ]
	assert_eq "${lines[0]}" "Usage: agentrt-tool [-t DIR]... [OPTIONS] [FILE...]"
	for opt in --tools --env --record --replay --cwd --jobs --timeout \
	    --kill-grace --cpu --memory --files --max-output --max-line --list \
	    --help --version; do
		[[ "$output" == *"$opt"* ]] || fail "--help lacks $opt"
	done
}

@test "--version names the program, the version and the libraries' versions" {
	run agentrt-tool --version
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" =~ ^agentrt-tool\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	# The libraries it links, as curl names them, at their versions.
	v='[0-9]+\.[0-9]+(\.[0-9]+)?'
	[[ "${lines[1]}" =~ ^libjq/$v\ LMDB/$v$ ]] || fail "${lines[1]}"
}

@test "bad options and values are usage errors that read nothing" {
	run agentrt-tool --bogus </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: agentrt-tool"* ]]
	[[ "$output" == *"Try 'agentrt-tool --help'"* ]]
	run agentrt-tool --tools "$BATS_TEST_TMPDIR/none" </dev/null
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-tool: bad --tools '$BATS_TEST_TMPDIR/none': No such file or directory"
	: >"$BATS_TEST_TMPDIR/file"
	run agentrt-tool --cwd "$BATS_TEST_TMPDIR/file" </dev/null
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-tool: bad --cwd '$BATS_TEST_TMPDIR/file': not a directory"
	for bad in 0 -1 x 1e99 '' 0.0001 nan inf; do
		run agentrt-tool --timeout "$bad" </dev/null
		[ "$status" -eq 2 ] || fail "--timeout '$bad' accepted"
		[[ "$output" == "agentrt-tool: bad --timeout '$bad'"* ]]
	done
	for bad in 0 -5 x 1k ''; do
		run agentrt-tool --max-output "$bad" </dev/null
		[ "$status" -eq 2 ] || fail "--max-output '$bad' accepted"
		[[ "$output" == "agentrt-tool: bad --max-output '$bad'"* ]]
	done
	for bad in 0 -5 x 1q ''; do
		run agentrt-tool --max-line "$bad" </dev/null
		[ "$status" -eq 2 ] || fail "--max-line '$bad' accepted"
		[[ "${lines[0]}" == "agentrt-tool: bad --max-line '$bad': expected a size such as 64M or 1T" ]]
	done
	run agentrt-tool --kill-grace x </dev/null
	[ "$status" -eq 2 ]
	run agentrt-tool -j </dev/null
	[ "$status" -eq 2 ]
	run agentrt-tool --list extra
	[ "$status" -eq 2 ]
	run env AGENTRT_CLOCK=yesterday agentrt-tool </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-tool: bad AGENTRT_CLOCK: "* ]]
}

@test "examples/tools/calc answers 17*23 with 391: at once an empty decision, then the settle" {
	req calc '{"expr":"17*23"}' | tool_run -t "$examples"
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	[ "$(wc -l <"$out")" -eq 2 ]
	assert_eq "$(line 1)" '{"type":"decision.response","session_id":"s1","decision_id":"d-c1","actions":[]}'
	assert_eq "$(line 2)" '{"type":"tool.result","session_id":"s1","id":"c1","attempt":1,"result":"391"}'
}

@test "calc refuses what is not integer arithmetic, with its message" {
	req calc '{"expr":"2^8"}' | tool_run -t "$examples"
	assert_eq "$(line 2 | jq -c '[.type, .error, .retryable]')" \
	    '["tool.error","calc: only integers, + - * / and parentheses are allowed",false]'
	req calc '{"expr":"(1+2)*3 - 10/3"}' | tool_run -t "$examples"
	assert_eq "$(line 2 | jq -r .result)" 6
	req calc '{"x":1}' | tool_run -t "$examples"
	assert_eq "$(line 2 | jq -r .error)" 'calc: expected {"expr": "..."} on stdin'
}

@test "a failing tool's error is the tail of its stderr; the attempt is the trigger's" {
	tool broken <<-'EOF'
	#!/bin/sh
	echo 'partial output'
	i=0
	while [ $i -lt 300 ]; do echo "noise line $i" >&2; i=$((i + 1)); done
	printf '  fatal: the widget broke  \n\n' >&2
	exit 3
	EOF
	req broken '{}' c9 '{"attempt":4}' | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(line 2 | jq -c '[.type, .id, .attempt, .retryable]')" '["tool.error","c9",4,false]'
	msg=$(line 2 | jq -r .error)
	[[ "$msg" == *"noise line 299"$'\n'"  fatal: the widget broke" ]]
	[[ "$msg" != *"noise line 200"* ]]
	[ "${#msg}" -le 1024 ]
	[ "${#msg}" -ge 1000 ]
}

@test "exit statuses without stderr: exit status N, killed by signal S" {
	printf '#!/bin/sh\nexit 4\n' | tool four
	printf '#!/bin/sh\nkill -KILL $$\n' | tool killed
	{ req four '{}' a; req killed '{}' b; } | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c 'select(.type == "tool.error") | [.id, .error, .retryable]' "$out" | sort)" \
	    "$(printf '%s\n' '["a","exit status 4",false]' '["b","killed by signal 9",false]')"
}

@test "exit 75 is a retryable error" {
	printf '#!/bin/sh\necho "rate limited" >&2\nexit 75\n' | tool flaky
	req flaky '{}' | tool_run -t "$tools"
	assert_eq "$(line 2)" '{"type":"tool.error","session_id":"s1","id":"c1","attempt":1,"error":"rate limited","retryable":true}'
}

@test "calls run in parallel: the faster settles first, both settle" {
	printf '#!/bin/sh\nsleep 0.4\necho slow\n' | tool slow
	printf '#!/bin/sh\nsleep 0.1\necho fast\n' | tool fast
	{ req slow '{}' s; req fast '{}' f; } | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '[.type, .decision_id // .id, .result]' "$out")" "$(cat <<-'EOF'
	["decision.response","d-s",null]
	["decision.response","d-f",null]
	["tool.result","f","fast"]
	["tool.result","s","slow"]
	EOF
	)"
}

@test "the time limit kills the tool's whole group, a child that ignores SIGTERM too" {
	tool stubborn <<-EOF
	#!/bin/sh
	trap '' TERM
	sh -c 'trap "" TERM; while :; do sleep 1; done' &
	echo \$! >"$BATS_TEST_TMPDIR/child.pid"
	echo \$\$ >"$BATS_TEST_TMPDIR/tool.pid"
	wait
	EOF
	req stubborn '{}' | tool_run -t "$tools" --timeout 0.3 --kill-grace 100
	[ "$status" -eq 0 ]
	assert_eq "$(line 2)" '{"type":"tool.error","session_id":"s1","id":"c1","attempt":1,"error":"deadline exceeded","retryable":true}'
	[ -s "$BATS_TEST_TMPDIR/child.pid" ]
	gone "$(cat "$BATS_TEST_TMPDIR/tool.pid")"
	gone "$(cat "$BATS_TEST_TMPDIR/child.pid")"
}

@test "the trigger's deadline sets the time limit, on AGENTRT_CLOCK's clock" {
	printf '#!/bin/sh\nsleep 5\necho late\n' | tool sleepy
	export AGENTRT_CLOCK=2026-01-02T03:04:05Z
	start=$(date +%s%N)
	req sleepy '{}' c1 '{"deadline":"2026-01-02T03:04:05.200Z"}' |
	    tool_run -t "$tools" --timeout 60
	elapsed=$((($(date +%s%N) - start) / 1000000))
	assert_eq "$(line 2 | jq -c '[.error, .retryable]')" '["deadline exceeded",true]'
	[ "$elapsed" -lt 4000 ] || fail "took ${elapsed} ms"
}

@test "a deadline already passed is answered at once, without running the tool" {
	printf '#!/bin/sh\ntouch "%s/ran"\n' "$BATS_TEST_TMPDIR" | tool t
	export AGENTRT_CLOCK=2026-01-02T03:04:05Z
	req t '{}' c1 '{"deadline":"2026-01-02T03:04:04Z"}' | tool_run -t "$tools"
	[ "$(wc -l <"$out")" -eq 1 ]
	assert_eq "$(line 1 | jq -c .actions)" '[{"type":"tool.error","error":"deadline exceeded","retryable":true}]'
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "a tool of another name is passed on unchanged, byte for byte" {
	text='{"type":"decision.request", "session_id":"s1","decision_id":"d","trigger":{"type":"tool.execute","id":"c","name":"elsewhere","arguments":"{}","input":{},"attempt":1.0,"big":12345678901234567890}}'
	printf '%s\n' "$text" | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	assert_eq "$(cat "$out")" "$text"
}

@test "a tool without its exec bit is said at start, in --list, and fails its call" {
	printf '#!/bin/sh\nwc -w\n' >"$tools/wordcount"
	echo '{"description":"counts words"}' >"$tools/lost.json"
	echo 'not a script' >"$tools/lost"
	echo 'notes on these tools' >"$tools/README"
	msg="tool 'wordcount' is not executable (chmod +x $tools/wordcount)"
	req wordcount '{}' | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(cat "$out")" "$(jq -nc --arg m "$msg" '{type:"decision.response",session_id:"s1",decision_id:"d-c1",actions:[{type:"tool.error",error:$m,retryable:false}]}')"
	# Once when it starts, for each (a declaration beside it marks
	# lost as a tool too, a README is none), once for the call.
	assert_eq "$(cat "$err")" "agentrt-tool: tool 'lost' is not executable (chmod +x $tools/lost)
agentrt-tool: $msg
agentrt-tool: <stdin>:1: $msg"
	run agentrt-tool --list -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$output" "agentrt-tool: tool 'lost' is not executable (chmod +x $tools/lost)
agentrt-tool: $msg"
	# It hides a tool of its name in a later directory, as any would.
	mkdir -p "$BATS_TEST_TMPDIR/later"
	printf '#!/bin/sh\necho 1\n' >"$BATS_TEST_TMPDIR/later/wordcount"
	chmod +x "$BATS_TEST_TMPDIR/later/wordcount"
	req wordcount '{}' | tool_run -t "$tools" -t "$BATS_TEST_TMPDIR/later"
	assert_eq "$(jq -r '.actions[0].error' "$out")" "$msg"
	# With the bit set it runs.
	chmod +x "$tools/wordcount"
	req wordcount '{"a":"b"}' | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(line 2 | jq -r .result)" 1
	[[ "$(cat "$err")" != *wordcount* ]]
}

@test "a bad tool name is refused without touching the file system" {
	mkdir -p "$BATS_TEST_TMPDIR/outside"
	printf '#!/bin/sh\ntouch "%s/escaped"\n' "$BATS_TEST_TMPDIR" |
	    tool ../outside/esc
	printf '.\n' >"$tools/x.jq"
	for name in ../outside/esc .hidden x.jq -x '' 'a b' \
	    "$(printf 'n%.0s' $(seq 65))"; do
		req "$name" '{}' | tool_run -t "$tools"
		[ "$status" -eq 0 ]
		assert_eq "$(cat "$out")" '{"type":"decision.response","session_id":"s1","decision_id":"d-c1","actions":[{"type":"tool.error","error":"bad tool name","retryable":false}]}'
	done
	jq -nc '{type:"decision.request",session_id:"s1",decision_id:"d",trigger:{type:"tool.execute",id:"c",name:7,arguments:"{}",attempt:1}}' |
	    tool_run -t "$tools"
	assert_eq "$(jq -r '.actions[0].error' "$out")" "bad tool name"
	[ ! -e "$BATS_TEST_TMPDIR/escaped" ]
}

@test "a jq tool answers in the decision itself, with no settle line" {
	req upper '{"text":"hello, world"}' | tool_run -t "$examples"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$out")" -eq 1 ]
	assert_eq "$(cat "$out")" '{"type":"decision.response","session_id":"s1","decision_id":"d-c1","actions":[{"type":"tool.result","result":"HELLO, WORLD"}]}'
}

@test "a jq tool: JSON results as compact text, errors, bad arguments" {
	printf '{sum: (.a + .b), of: [.a, .b]}\n' >"$tools/add.jq"
	printf 'error("no \\(.what)")\n' >"$tools/fails.jq"
	printf '.a |\n' >"$tools/broken.jq"
	{
		req add '{"a": 1, "b": 2}' a
		req fails '{"what":"luck"}' b
		req add '{"a":' c
		req broken '{}' d
	} | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '.actions[0] | [.type, .result // .error]' "$out" | sed -n 1,3p)" "$(cat <<-'EOF'
	["tool.result","{\"sum\":3,\"of\":[1,2]}"]
	["tool.error","no luck"]
	["tool.error","arguments are not JSON"]
	EOF
	)"
	[[ "$(line 4 | jq -r '.actions[0].error')" == "compile 'broken.jq': syntax error"* ]]
}

@test "a jq tool sees no environment: env and \$ENV are empty" {
	printf '[env, $ENV, (env | length)]\n' >"$tools/peek.jq"
	export OPENAI_API_KEY=sk-secret-value HOME_TOO=x
	req peek '{}' | tool_run -t "$tools"
	assert_eq "$(jq -c '.actions[0].result' "$out")" '"[{},{},0]"'
}

@test "an executable sees a scrubbed environment and its call's ids" {
	printf '#!/bin/sh\nenv\n' | tool showenv
	export OPENAI_API_KEY=sk-secret-value ANTHROPIC_API_KEY=sk-other \
	    AGENTRT_DB=/somewhere MY_VAR=x
	req showenv '{}' call-42 '{"attempt":2}' | tool_run -t "$tools"
	result=$(line 2 | jq -r .result)
	[[ "$result" == *"AGENTRT_CALL_ID=call-42"* ]]
	[[ "$result" == *"AGENTRT_SESSION_ID=s1"* ]]
	[[ "$result" == *"AGENTRT_ATTEMPT=2"* ]]
	[[ "$result" == *"HOME=$HOME"* ]]
	[[ "$result" != *OPENAI_API_KEY* ]]
	[[ "$result" != *sk-secret-value* ]]
	[[ "$result" != *ANTHROPIC* ]]
	[[ "$result" != *AGENTRT_DB* ]]
	[[ "$result" != *MY_VAR* ]]
}

@test "a tool inherits no descriptor but its stdin, stdout and stderr" {
	[ -d /proc/self/fd ] || skip "no /proc"
	printf '#!/bin/sh\nfor fd in 3 4 5 6 7 8 9; do [ -e /proc/$$/fd/$fd ] && echo "fd $fd"; done; echo checked\n' | tool fds
	req fds '{}' | tool_run -t "$tools" 5>"$BATS_TEST_TMPDIR/five" 6<"$tools/fds"
	assert_eq "$(line 2 | jq -r .result)" checked
}

@test "arguments come on stdin, and the tool runs in --cwd" {
	printf '#!/bin/sh\npwd\ncat\n' | tool where
	mkdir "$BATS_TEST_TMPDIR/work"
	req where '{"k": "v"}' | tool_run -t "$tools" --cwd "$BATS_TEST_TMPDIR/work"
	assert_eq "$(line 2 | jq -r .result)" "$BATS_TEST_TMPDIR/work"$'\n''{"k": "v"}'
	(cd "$BATS_TEST_TMPDIR" && req where '{}' | agentrt-tool -t "$tools") >"$out"
	assert_eq "$(line 2 | jq -r .result)" "$BATS_TEST_TMPDIR"$'\n''{}'
}

@test "--max-output caps the result and marks the cut" {
	printf '#!/bin/sh\nseq 1 100000\n' | tool chatty
	req chatty '{}' | tool_run -t "$tools" --max-output 10
	assert_eq "$(line 2 | jq -r .result)" "$(printf '1\n2\n3\n4\n5\n[output truncated at 10 bytes]')"
}

@test "several MiB of arguments and of output do not stall" {
	printf '#!/bin/sh\nwc -c | tr -d " "\n' | tool count
	printf '#!/bin/sh\nhead -c 3000000 /dev/zero | tr "\\\\0" y\n' | tool big
	args=$(head -c 3000000 /dev/zero | tr '\0' a)
	# printf, a builtin: 3 MB is past the limit of an exec's arguments.
	{
		printf '{"type":"decision.request","session_id":"s1","decision_id":"d-a","trigger":{"type":"tool.execute","id":"a","name":"count","arguments":"%s","attempt":1}}\n' "$args"
		req big '{}' b
	} | tool_run -t "$tools" --max-output 4000000
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c 'select(.id == "a") | .result' "$out")" '"3000000"'
	assert_eq "$(jq -r 'select(.id == "b") | .result | length' "$out")" 3000000
}

@test "a tool that cannot run is refused at once, with the reason" {
	printf 'echo no shebang\n' | tool noexec
	req noexec '{}' | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(cat "$out")" '{"type":"decision.response","session_id":"s1","decision_id":"d-c1","actions":[{"type":"tool.error","error":"run tool '\''noexec'\'': Exec format error","retryable":false}]}'
	assert_eq "$(cat "$err")" "agentrt-tool: run tool 'noexec': Exec format error"
}

@test "other lines pass through in order, among the answers" {
	printf '.x\n' >"$tools/x.jq"
	{
		echo '{"type":"client.message","n":1}'
		req x '{"x":"one"}' a
		echo '{"type":"decision.request","session_id":"s1","decision_id":"d2","trigger":{"type":"llm.execute","id":"l"}}'
		echo '{"type":"whatever.new","n":2}'
		req absent '{}' b
		req x '{"x":"two"}' c
		echo '{"type":"llm.request","n":3}'
	} | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '[.type, .n // .decision_id // .trigger.name]' "$out")" "$(cat <<-'EOF'
	["client.message",1]
	["decision.response","d-a"]
	["decision.request","d2"]
	["whatever.new",2]
	["decision.request","d-b"]
	["decision.response","d-c"]
	["llm.request",3]
	EOF
	)"
}

@test "a type holding a NUL is a bad line, never a tool run" {
	tool mark <<-EOF
	#!/bin/sh
	echo ran >>"$BATS_TEST_TMPDIR/ran"
	echo ok
	EOF
	{
		req mark '{}' c0 | jq -c '.type = "decision.request\u0000x"'
		req mark '{}' c1 '{"type":"tool.execute\u0000x"}'
		req mark '{}' c2
	} | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '[.type, .code // .decision_id]' "$out")" "$(cat <<-'EOF'
	["error","bad_type"]
	["decision.request","d-c1"]
	["decision.response","d-c2"]
	["tool.result",null]
	EOF
	)"
	assert_eq "$(line 1 | jq -r .message)" \
	    '<stdin>:1: line'\''s "type" "decision.request\u0000x" holds a NUL byte'
	assert_eq "$(line 1 | jq -r .input | jq -r .trigger.id)" c0
	# A trigger's type holding a NUL is no tool.execute: passed on.
	assert_eq "$(line 2 | jq -r .trigger.type | od -An -c | tr -s ' ')" \
	    " t o o l . e x e c u t e \\0 x \\n"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/ran")" ran
	assert_eq "$(cat "$err")" \
	    'agentrt-tool: <stdin>:1: line'\''s "type" "decision.request\u0000x" holds a NUL byte'
}

@test "bad lines become error lines and a stderr line each; the run goes on and exits 0" {
	printf '.\n' >"$tools/id.jq"
	{
		echo 'not json'
		echo '[1,2]'
		echo '{"no":"type"}'
		printf '{"type":"x","pad":"%s"}\n' "$(head -c 300 /dev/zero | tr '\0' p)"
		req id '"after"'
	} | tool_run -t "$tools" --max-line 200
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '[.type, .code // .actions[0].result]' "$out")" "$(cat <<-'EOF'
	["error","bad_json"]
	["error","not_object"]
	["error","no_type"]
	["error","line_too_long"]
	["decision.response","after"]
	EOF
	)"
	assert_eq "$(jq -r 'select(.type == "error") | .message' "$out" | cut -d: -f1-2)" \
	    "$(printf '<stdin>:1\n<stdin>:2\n<stdin>:3\n<stdin>:4')"
	assert_eq "$(line 1 | jq -r .input)" "not json"
	[ "$(wc -l <"$err")" -eq 4 ]
	[[ "$(sed -n 1p "$err")" == "agentrt-tool: <stdin>:1: not valid JSON"* ]]
}

@test "a request for a tool we have with bad fields is an error line naming the field" {
	printf '.\n' >"$tools/id.jq"
	jq -nc '{type:"decision.request",session_id:"s1",decision_id:"d",trigger:{type:"tool.execute",name:"id",arguments:"{}",attempt:1}}' >"$BATS_TEST_TMPDIR/in"
	tool_run -t "$tools" <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '[.type, .code, .session_id, .message]' "$out")" \
	    '["error","bad_field","s1","<stdin>:1: trigger: missing field '\''id'\''"]'
	assert_eq "$(jq -r .input "$out")" "$(head -c 256 "$BATS_TEST_TMPDIR/in")"
	assert_eq "$(cat "$err")" "agentrt-tool: <stdin>:1: trigger: missing field 'id'"
	jq -nc '{type:"decision.request",session_id:"s1",decision_id:"d",trigger:{type:"tool.execute",id:"c",name:"id",arguments:{},attempt:1}}' |
	    tool_run -t "$tools"
	assert_eq "$(jq -c '[.code, .message]' "$out")" \
	    '["bad_field","<stdin>:1: trigger: field '\''arguments'\'': expected string, got object"]'
	jq -nc '{type:"decision.request",session_id:"s1",decision_id:"d",trigger:{type:"tool.execute",id:"c",name:"id",arguments:"{}",attempt:1.5}}' |
	    tool_run -t "$tools"
	assert_eq "$(jq -c '[.code, .message]' "$out")" \
	    '["bad_field","<stdin>:1: trigger: field '\''attempt'\'': expected an integer, got 1.5"]'
	jq -nc '{type:"decision.request",session_id:"s1",decision_id:"d",trigger:{type:"tool.execute",id:"c",name:"id",arguments:"{}",attempt:1,deadline:"soon"}}' |
	    tool_run -t "$tools"
	assert_eq "$(jq -c '[.type, .code]' "$out")" '["error","bad_time"]'
	[[ "$(jq -r .message "$out")" == "<stdin>:1: trigger: field 'deadline': bad time 'soon'"* ]]
	jq -nc '{type:"decision.request",decision_id:"d",trigger:{type:"tool.execute",id:"c",name:"id",arguments:"{}",attempt:1}}' |
	    tool_run -t "$tools"
	assert_eq "$(jq -c '[.type, .code, .message, has("session_id")]' "$out")" \
	    '["error","bad_field","<stdin>:1: missing field '\''session_id'\''",false]'
	[ "$(wc -l <"$err")" -eq 1 ]
}

@test "tools are found in --tools dirs in order, else \$AGENTRT_TOOLS, else ./tools" {
	mkdir -p "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" "$BATS_TEST_TMPDIR/tools"
	printf '"from a"\n' >"$BATS_TEST_TMPDIR/a/who.jq"
	printf '"from b"\n' >"$BATS_TEST_TMPDIR/b/who.jq"
	printf '"from b only"\n' >"$BATS_TEST_TMPDIR/b/only.jq"
	printf '"from ./tools"\n' >"$BATS_TEST_TMPDIR/tools/who.jq"
	{ req who '{}' x; req only '{}' y; } |
	    tool_run -t "$BATS_TEST_TMPDIR/a" -t "$BATS_TEST_TMPDIR/b"
	assert_eq "$(jq -c '.actions[0].result' "$out")" "$(printf '"from a"\n"from b only"')"
	req who '{}' | AGENTRT_TOOLS=":$BATS_TEST_TMPDIR/missing:$BATS_TEST_TMPDIR/b:" tool_run
	assert_eq "$(jq -c '.actions[0].result' "$out")" '"from b"'
	(cd "$BATS_TEST_TMPDIR" && req who '{}' | agentrt-tool) >"$out"
	assert_eq "$(jq -c '.actions[0].result' "$out")" '"from ./tools"'
}

@test "--list prints each tool's declaration, or its name" {
	run agentrt-tool --list -t "$examples"
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(jq -c . "$examples/calc.json")"$'\n''{"name":"upper"}'$'\n'"$(jq -c . "$examples/wordcount.json")"
	printf '#!/bin/sh\n' | tool odd
	printf '[1]\n' >"$tools/odd.json"
	run agentrt-tool --list -t "$tools" -t "$examples"
	[ "$status" -eq 1 ]
	assert_eq "${lines[0]}" "$(jq -c . "$examples/calc.json")"
	[[ "$output" == *"agentrt-tool: read '$tools/odd.json': not a JSON object"* ]]
	[[ "$output" == *'{"name":"odd"}'* ]]
}

@test "input files are read in turn; - is stdin; an unreadable file fails at the end" {
	printf '.n\n' >"$tools/n.jq"
	req n '{"n":1}' a >"$BATS_TEST_TMPDIR/one.ndjson"
	req n '{"n":2}' b | tool_run -t "$tools" "$BATS_TEST_TMPDIR/one.ndjson" - "$BATS_TEST_TMPDIR/missing"
	[ "$status" -eq 1 ]
	assert_eq "$(jq -c '.actions[0].result' "$out")" "$(printf '"1"\n"2"')"
	assert_eq "$(cat "$err")" "agentrt-tool: open '$BATS_TEST_TMPDIR/missing': No such file or directory"
}

@test "empty input is a quiet exit 0" {
	tool_run -t "$tools" </dev/null
	[ "$status" -eq 0 ]
	[ ! -s "$out" ]
	[ ! -s "$err" ]
}

@test "a write that fails (>/dev/full) is exit 1 with a message" {
	run bash -c 'echo "{\"type\":\"x\"}" | agentrt-tool -t "$1" >/dev/full' _ "$tools"
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tool: write: No space left on device"
	# The tool it started when the write failed is killed, not orphaned.
	printf '#!/bin/sh\necho $$ >"%s/long.pid"\nexec sleep 30\n' \
	    "$BATS_TEST_TMPDIR" | tool long
	req long '{}' >"$BATS_TEST_TMPDIR/in"
	run bash -c 'timeout 10 agentrt-tool -t "$1" <"$2" >/dev/full' _ \
	    "$tools" "$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tool: write: No space left on device"
	# Killed before it wrote its pid, it is gone; an orphan would write it.
	for i in $(seq 1 20); do
		[ -s "$BATS_TEST_TMPDIR/long.pid" ] && break
		sleep 0.05
	done
	[ ! -s "$BATS_TEST_TMPDIR/long.pid" ] ||
	    gone "$(cat "$BATS_TEST_TMPDIR/long.pid")"
	run bash -c 'agentrt-tool --list -t "$1" >/dev/full' _ "$examples"
	[ "$status" -eq 1 ]
	run bash -c 'agentrt-tool --help >/dev/full'
	[ "$status" -eq 1 ]
}

@test "SIGTERM kills the running tools' groups" {
	tool hang <<-EOF
	#!/bin/sh
	echo \$\$ >"$BATS_TEST_TMPDIR/hang.pid"
	exec sleep 30
	EOF
	mkfifo "$BATS_TEST_TMPDIR/in"
	agentrt-tool -t "$tools" <"$BATS_TEST_TMPDIR/in" >"$out" 2>"$err" 3>&- &
	pid=$!
	exec 4>"$BATS_TEST_TMPDIR/in"
	req hang '{}' >&4
	wait_lines "$out" 1
	for i in $(seq 1 100); do
		[ -s "$BATS_TEST_TMPDIR/hang.pid" ] && break
		sleep 0.05
	done
	kill -TERM "$pid"
	wait "$pid" || status=$?
	exec 4>&-
	[ "$status" -eq 143 ]
	gone "$(cat "$BATS_TEST_TMPDIR/hang.pid")"
}

# --- hardening: limits, -j, binary output ------------------------------

# hard_run ARGS...: tool_run over the hard-* fixtures, in $work.
hard_run() {
	work=$BATS_TEST_TMPDIR/work
	mkdir -p "$work"
	tool_run -t "$fixtures/tools" --cwd "$work" "$@"
}

# The settle line of call ID in $out, compact.
settle() {
	jq -c --arg id "$1" 'select(.id == $id)' "$out"
}

@test "bad -j, --cpu, --memory and --files values are one-line usage errors" {
	local opt bad
	for bad in -1 x 1.5 '' 1000001; do
		for opt in -j --jobs; do
			run agentrt-tool "$opt" "$bad" </dev/null
			[ "$status" -eq 2 ] || fail "$opt '$bad' accepted"
			assert_eq "$output" "agentrt-tool: bad --jobs '$bad': expected a whole number from 0 to 1000000"
		done
	done
	for bad in 0 -1 x 1.5 '' 1e3 1000000001; do
		run agentrt-tool --cpu "$bad" </dev/null
		[ "$status" -eq 2 ] || fail "--cpu '$bad' accepted"
		assert_eq "$output" "agentrt-tool: bad --cpu '$bad': expected a whole number from 1 to 1000000000"
	done
	for bad in 0 -1 x 1q 1.5M '' M 99999999999999999999; do
		run agentrt-tool --memory "$bad" </dev/null
		[ "$status" -eq 2 ] || fail "--memory '$bad' accepted"
		assert_eq "$output" "agentrt-tool: bad --memory '$bad': expected a size such as 64M or 1T"
	done
	for bad in 0 -1 x 8k '' 1048577; do
		run agentrt-tool --files "$bad" </dev/null
		[ "$status" -eq 2 ] || fail "--files '$bad' accepted"
		assert_eq "$output" "agentrt-tool: bad --files '$bad': expected a whole number from 1 to 1048576"
	done
	for opt in '-j 0' '-j 3' '--jobs=1000000' '--cpu 5' '--memory 512M' \
	    '--memory=1g' '--memory 4096' '--files 64'; do
		run agentrt-tool $opt </dev/null
		[ "$status" -eq 0 ] || fail "$opt refused: $output"
		[ -z "$output" ]
	done
}

@test "a tool that prints 100 MiB: capped and marked, quickly, in little memory" {
	command -v python3 >/dev/null || skip "no python3 to measure memory"
	req hard-flood '{}' >"$BATS_TEST_TMPDIR/in"
	mkdir -p "$BATS_TEST_TMPDIR/work"
	start=$(date +%s%N)
	# Peak RSS (KiB) of agentrt-tool and the tool it ran, on stderr.
	python3 -c '
import resource, subprocess, sys
st = subprocess.call(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(st)' agentrt-tool -t "$fixtures/tools" --cwd "$BATS_TEST_TMPDIR/work" \
	    <"$BATS_TEST_TMPDIR/in" >"$out" 2>"$err"
	elapsed=$((($(date +%s%N) - start) / 1000000))
	rss=$(tail -n 1 "$err")
	[ "$(wc -l <"$out")" -eq 2 ]
	result=$(line 2 | jq -r .result)
	# The default cap, 1 MiB of y, then the marker on a line of its own.
	assert_eq "$(printf '%s\n' "$result" | tail -n 1)" "[output truncated at 1048576 bytes]"
	assert_eq "$(printf '%s\n' "$result" | head -n 1 | wc -c)" 1048577
	assert_eq "$(printf '%s' "$result" | head -n 1 | tr -d y)" ""
	[ "$(wc -c <"$out")" -lt 1100000 ]
	# 100 MiB went by, but at most the cap and some change stayed.
	[ "$rss" -lt 65536 ] || fail "peak RSS ${rss} KiB"
	[ "$elapsed" -lt 20000 ] || fail "took ${elapsed} ms"
}

@test "a tool that forks a sleeper and exits settles at once, and the sleeper is killed" {
	start=$(date +%s%N)
	req hard-detach '{}' | hard_run --kill-grace 5000
	elapsed=$((($(date +%s%N) - start) / 1000000))
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	assert_eq "$(settle c1 | jq -c '[.type, .result]')" '["tool.result","detached"]'
	# It waited neither for the sleeper (30 s) nor for the grace (5 s):
	# the sleeper, still in the tool's group, was killed with it.
	[ "$elapsed" -lt 4000 ] || fail "took ${elapsed} ms"
	[ -s "$work/hard-detach.pid" ]
	gone "$(cat "$work/hard-detach.pid")"
}

@test "a sleeper that leaves the tool's group does not hold the call past --kill-grace" {
	command -v setsid >/dev/null || skip "no setsid"
	start=$(date +%s%N)
	req hard-detach '"setsid"' | hard_run --kill-grace 300
	elapsed=$((($(date +%s%N) - start) / 1000000))
	pid=$(cat "$work/hard-detach.pid")
	kill "$pid" 2>/dev/null || true		# out of our reach: ours to end
	[ "$status" -eq 0 ]
	assert_eq "$(settle c1 | jq -c '[.type, .result]')" '["tool.result","detached"]'
	[ "$elapsed" -ge 300 ] || fail "settled after ${elapsed} ms"
	[ "$elapsed" -lt 10000 ] || fail "took ${elapsed} ms: the sleeper held it"
}

@test "a tool that ignores SIGTERM is killed after --kill-grace" {
	start=$(date +%s%N)
	req hard-deaf '{}' | hard_run --timeout 0.3 --kill-grace 300
	elapsed=$((($(date +%s%N) - start) / 1000000))
	[ "$status" -eq 0 ]
	assert_eq "$(settle c1 | jq -c '[.type, .error, .retryable]')" \
	    '["tool.error","deadline exceeded",true]'
	[ "$elapsed" -ge 600 ] || fail "settled after ${elapsed} ms, before the grace"
	[ "$elapsed" -lt 10000 ] || fail "took ${elapsed} ms"
	gone "$(cat "$work/hard-deaf.pid")"
}

@test "a tool finds no provider key, though agentrt-tool's environment has them" {
	export OPENAI_API_KEY=sk-openai-secret ANTHROPIC_API_KEY=sk-ant-secret
	req hard-keys '{}' | hard_run
	[ "$status" -eq 0 ]
	assert_eq "$(settle c1 | jq -r .result)" "$(printf '%s\n' \
	    OPENAI_API_KEY=unset ANTHROPIC_API_KEY=unset)"
	! grep -q secret "$out" "$err" || false
}

@test "a tool runs with core dumps off" {
	req hard-core '{}' | hard_run
	[ "$status" -eq 0 ]
	assert_eq "$(settle c1 | jq -r .result)" 0
}

@test "a name with ../ is refused, though the path it names is a tool" {
	mkdir -p "$BATS_TEST_TMPDIR/sub"
	for name in ../tools/hard-keys hard-keys/../hard-keys \
	    ../../fixtures/tools/hard-keys ..; do
		req "$name" '{}' | tool_run -t "$fixtures/tools" -t "$BATS_TEST_TMPDIR/sub"
		[ "$status" -eq 0 ]
		assert_eq "$(jq -c '.actions' "$out")" '[{"type":"tool.error","error":"bad tool name","retryable":false}]'
	done
}

# The most "+ ID" lines not yet closed by "- ID" in the log FILE.
max_overlap() {
	awk '$1 == "+" { n++; if (n > max) max = n } $1 == "-" { n-- }
	    END { print max + 0 }' "$1"
}

@test "-j 2: five calls, at most two running at any time, all settled" {
	{ for i in 1 2 3 4 5; do req hard-nap '{"until":2}' "c$i"; done; } | hard_run -j 2
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	# Every decision is answered at once, the waiting ones too.
	assert_eq "$(jq -c 'select(.type == "decision.response") | [.decision_id, .actions]' "$out")" \
	    "$(for i in 1 2 3 4 5; do echo "[\"d-c$i\",[]]"; done)"
	assert_eq "$(jq -r 'select(.type == "tool.result") | .result' "$out" | sort)" \
	    "$(printf 'c%s\n' 1 2 3 4 5)"
	[ "$(grep -c '^+' "$work/hard-nap.log")" -eq 5 ]
	assert_eq "$(max_overlap "$work/hard-nap.log")" 2
	# In arrival order: c1 and c2 first; the rest only as they finish.
	assert_eq "$(grep '^+' "$work/hard-nap.log" | head -n 2 | sort | tr '\n' ' ')" "+ c1 + c2 "
}

@test "-j 1 runs executables one at a time; jq tools are not held back" {
	{ req hard-nap '{}' c1; req hard-nap '{}' c2; req add '{"a":1,"b":2}' c3; } |
	    hard_run -j 1
	[ "$status" -eq 0 ]
	assert_eq "$(max_overlap "$work/hard-nap.log")" 1
	assert_eq "$(line 3)" '{"type":"decision.response","session_id":"s1","decision_id":"d-c3","actions":[{"type":"tool.result","result":"3"}]}'
	assert_eq "$(jq -r 'select(.type == "tool.result") | .result' "$out")" "$(printf 'c1\nc2')"
}

@test "a waiting call whose deadline passes is settled without running" {
	export AGENTRT_CLOCK=2026-01-02T03:04:05Z
	{
		req hard-nap '{}' c1
		req hard-nap '{}' c2 '{"deadline":"2026-01-02T03:04:05.100Z"}'
	} | hard_run -j 1
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c 'select(.id) | [.id, .type, .result // .error]' "$out")" "$(cat <<-'EOF'
	["c2","tool.error","deadline exceeded"]
	["c1","tool.result","c1"]
	EOF
	)"
	assert_eq "$(settle c2 | jq -c '[.session_id, .attempt, .retryable]')" '["s1",1,true]'
	! grep -q c2 "$work/hard-nap.log" || false
}

@test "-j 0 lifts the limit: five calls all run at once" {
	{ for i in 1 2 3 4 5; do req hard-nap '{"until":5}' "c$i"; done; } | hard_run -j 0
	[ "$status" -eq 0 ]
	assert_eq "$(max_overlap "$work/hard-nap.log")" 5
}

@test "--cpu 1: a busy loop is killed with a clear error" {
	start=$(date +%s%N)
	req hard-spin '{}' | hard_run --cpu 1
	elapsed=$((($(date +%s%N) - start) / 1000000))
	[ "$status" -eq 0 ]
	assert_eq "$(settle c1 | jq -c '[.type, .error, .retryable]')" \
	    '["tool.error","killed by signal XCPU: CPU time limit (--cpu 1)",false]'
	[ "$elapsed" -lt 10000 ] || fail "took ${elapsed} ms"
	# One that ignores SIGXCPU gets SIGKILL a CPU second later.
	req hard-spin '"ignore-xcpu"' | hard_run --cpu 1
	assert_eq "$(settle c1 | jq -c '[.type, .error, .retryable]')" \
	    '["tool.error","killed by signal KILL: CPU time limit (--cpu 1)",false]'
}

@test "--memory: a tool that allocates too much fails; one that fits works" {
	command -v python3 >/dev/null || skip "no python3"
	{ req hard-hog '{"mib":500}' big; req hard-hog '{"mib":8}' small; } |
	    hard_run --memory 200M
	[ "$status" -eq 0 ]
	assert_eq "$(settle big | jq -c '[.type, .retryable]')" '["tool.error",false]'
	[[ "$(settle big | jq -r .error)" == *MemoryError ]]
	assert_eq "$(settle small | jq -c '[.type, .result]')" '["tool.result","8"]'
	# A death with nothing on stderr names the limits in force.
	printf '#!/bin/sh\nkill -SEGV $$\n' | tool segv
	req segv '{}' | tool_run -t "$tools" --memory 64M --files 512
	assert_eq "$(line 2 | jq -r .error)" "killed by signal 11 (under --memory 64M, --files 512)"
}

@test "--files 8: a tool that opens many files fails; without it, it works" {
	command -v python3 >/dev/null || skip "no python3"
	req hard-files '{}' | hard_run --files 8
	[ "$status" -eq 0 ]
	assert_eq "$(settle c1 | jq -c '[.type, .retryable]')" '["tool.error",false]'
	[[ "$(settle c1 | jq -r .error)" == *"Too many open files"* ]]
	req hard-files '{}' | hard_run
	assert_eq "$(settle c1 | jq -c '[.type, .result]')" '["tool.result","50"]'
}

@test "output that is not UTF-8 text, or holds a NUL, is a non-retryable error" {
	{ req hard-bytes '"latin1"' a; req hard-bytes '"nul"' b; } | hard_run
	[ "$status" -eq 0 ]
	assert_eq "$(settle a)" '{"type":"tool.error","session_id":"s1","id":"a","attempt":1,"error":"output is not UTF-8 text (5 bytes)","retryable":false}'
	assert_eq "$(settle b | jq -c '[.error, .retryable]')" '["output is not UTF-8 text (4 bytes)",false]'
}

@test "the --max-output marker never splits a UTF-8 character" {
	for cap in 11 12 1999 2000; do
		req hard-bytes '"accents"' | hard_run --max-output "$cap"
		result=$(settle c1 | jq -r .result)
		keep=$(((cap / 2) * 2))
		if [ "$cap" -eq 2000 ]; then
			assert_eq "$(printf '%s' "$result" | wc -c)" 2000
			continue
		fi
		assert_eq "$result" "$(head -c "$keep" < <(for i in $(seq 1000); do printf '\303\251'; done))"$'\n'"[output truncated at $cap bytes]"
	done
}

# The EXAMPLES section runs as written, so the manual cannot drift.
@test "the man page's EXAMPLES run and succeed" {
	script=$BATS_TEST_TMPDIR/examples.sh
	mkdir "$BATS_TEST_TMPDIR/run"
	ln -s "$top_srcdir/examples" "$BATS_TEST_TMPDIR/run/examples"
	{
		echo 'set -euo pipefail'
		echo "cd '$BATS_TEST_TMPDIR/run'"
		awk '/^\.Sh EXAMPLES/ { on = 1; next } /^\.Sh / { on = 0 }
		    on && /^\.Bd -literal/ { lit = 1; next }
		    on && /^\.Ed/ { lit = 0; next }
		    on && lit { print; next }
		    on && /^\.Dl / { sub(/^\.Dl /, ""); print }' \
		    "$top_srcdir/man/agentrt-tool.1" |
			sed -e 's/\\e/\\/g' -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g"
	} >"$script"
	[ "$(grep -c agentrt-tool "$script")" -ge 3 ]
	run bash "$script"
	[ "$status" -eq 0 ] || fail "examples failed: $output"
	[[ "$output" == *'"result":"391"'* ]]
	[[ "$output" == *'"result":"HI"'* ]]
	[[ "$output" == *$'\ncalc\nupper'* ]]
}

# --- --record and --replay ---------------------------------------------

@test "--record keeps a real calc call; --replay answers it again with no tools" {
	tape=$BATS_TEST_TMPDIR/tape
	req calc '{"expr":"17*23"}' | tool_run -t "$examples" --record "$tape"
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	assert_eq "$(line 2)" '{"type":"tool.result","session_id":"s1","id":"c1","attempt":1,"result":"391"}'
	recorded=$(line 2 | jq -c '{type, result}')
	[ "$(wc -l <"$tape")" -eq 1 ]
	assert_eq "$(stat -c %a "$tape")" 600
	assert_eq "$(jq -c 'del(.key)' "$tape")" '{"type":"tool.exchange","name":"calc","arguments":{"expr":"17*23"},"result":"391"}'
	jq -r .key "$tape" | grep -Eqx '[0-9a-f]{64}'
	# Another session, another call id, the arguments spaced otherwise;
	# an empty tools directory, then none at all.
	mkdir "$BATS_TEST_TMPDIR/empty"
	for dir in "$BATS_TEST_TMPDIR/empty" "$BATS_TEST_TMPDIR/absent"; do
		req calc '{ "expr" : "17*23" }' c9 | tool_run -t "$dir" \
		    --replay "$tape"
		[ "$status" -eq 0 ] || fail "$(cat "$err")"
		[ ! -s "$err" ]
		[ "$(wc -l <"$out")" -eq 1 ]
		assert_eq "$(line 1)" '{"type":"decision.response","session_id":"s1","decision_id":"d-c9","actions":[{"type":"tool.result","result":"391"}]}'
		assert_eq "$(line 1 | jq -c '.actions[0]')" "$recorded"
	done
}

@test "--replay: a call the tape lacks is a tool.error, said once, and nothing runs" {
	tape=$BATS_TEST_TMPDIR/tape
	printf '#!/bin/sh\ntouch "%s/ran"\necho ran\n' "$BATS_TEST_TMPDIR" |
	    tool spy
	req calc '{"expr":"1+1"}' | tool_run -t "$examples" --record "$tape"
	{ req spy '{}' c1; req calc '{"expr":"1+2"}' c2; } |
	    tool_run -t "$tools" --replay "$tape"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$out")" -eq 2 ]
	assert_eq "$(line 1)" '{"type":"decision.response","session_id":"s1","decision_id":"d-c1","actions":[{"type":"tool.error","error":"no recorded answer for tool '"'spy'"' with these arguments (replay)","retryable":false}]}'
	assert_eq "$(line 2 | jq -r '.actions[0].error')" "no recorded answer for tool 'calc' with these arguments (replay)"
	assert_eq "$(cat "$err")" "agentrt-tool: <stdin>:1: no recorded answer for tool 'spy' with these arguments (replay)
agentrt-tool: <stdin>:2: no recorded answer for tool 'calc' with these arguments (replay)"
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "recorded errors replay as errors: a tool's message, a timeout" {
	tape=$BATS_TEST_TMPDIR/tape
	printf '#!/bin/sh\nexec sleep 10\n' | tool slow
	{ req calc '{"expr":"2^8"}' c1; req slow '{}' c2; } |
	    tool_run -t "$examples" -t "$tools" --timeout 0.3 --kill-grace 100 \
	    --record "$tape"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '[.name, .error]' "$tape" | sort)" \
	    '["calc",{"error":"calc: only integers, + - * / and parentheses are allowed","retryable":false}]
["slow",{"error":"deadline exceeded","retryable":true}]'
	{ req slow '{}' c3; req calc '{"expr":"2^8"}' c4; } |
	    tool_run --replay "$tape" -t "$BATS_TEST_TMPDIR/absent"
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	assert_eq "$(jq -c '.actions' "$out")" \
	    '[{"type":"tool.error","error":"deadline exceeded","retryable":true}]
[{"type":"tool.error","error":"calc: only integers, + - * / and parentheses are allowed","retryable":false}]'
}

@test "--replay plays one call's answers in order, then repeats the last; --record copies them" {
	tape=$BATS_TEST_TMPDIR/tape copy=$BATS_TEST_TMPDIR/copy
	printf '#!/bin/sh\nn=$(cat "%s/n" 2>/dev/null || echo 0)\necho $((n + 1)) >"%s/n"\necho "call $((n + 1))"\n' \
	    "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" | tool count
	for id in c1 c2; do
		req count '{}' "$id" | tool_run -t "$tools" --record "$tape"
	done
	printf '.text\n' >"$tools/echo.jq"
	req echo '{"text":"jq"}' | tool_run -t "$tools" --record "$tape"
	[ "$(wc -l <"$tape")" -eq 3 ]
	{ for id in c3 c4 c5; do req count '{}' "$id"; done
	  req echo '{"text":"jq"}' c6; } |
	    tool_run --replay "$tape" --record "$copy"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -r '.actions[0].result' "$out" | tr '\n' ' ')" \
	    'call 1 call 2 call 2 jq '
	assert_eq "$(cat "$BATS_TEST_TMPDIR/n")" 2
	[ "$(wc -l <"$copy")" -eq 4 ]
	assert_eq "$(jq -r .result "$copy" | tr '\n' ' ')" 'call 1 call 2 call 2 jq '
}

@test "--replay starts no MCP server" {
	printf '#!/bin/sh\ntouch "%s/started"\nexit 1\n' "$BATS_TEST_TMPDIR" |
	    tool server
	: >"$BATS_TEST_TMPDIR/tape"
	req calc '{}' | tool_run --mcp "$tools/server" \
	    --replay "$BATS_TEST_TMPDIR/tape"
	[ "$status" -eq 0 ]
	assert_eq "$(line 1 | jq -r '.actions[0].type')" tool.error
	[ ! -e "$BATS_TEST_TMPDIR/started" ]
}

@test "a bad tape is a usage error naming the file and line; so is a --record that cannot open" {
	tape=$BATS_TEST_TMPDIR/tape
	req calc '{"expr":"1+1"}' | tool_run -t "$examples" --record "$tape"
	echo '{"type":"tool.exchange","name":"calc","arguments":{}}' >>"$tape"
	req calc '{"expr":"1+1"}' | tool_run --replay "$tape"
	[ "$status" -eq 2 ]
	[ ! -s "$out" ]
	assert_eq "$(cat "$err")" "agentrt-tool: tape $tape:2: needs one of 'result' and 'error'"
	echo 'not json' >"$tape"
	req calc '{}' | tool_run --replay "$tape"
	[ "$status" -eq 2 ]
	[[ "$(cat "$err")" == "agentrt-tool: tape $tape:1: "* ]]
	req calc '{}' | tool_run --replay "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 2 ]
	assert_eq "$(cat "$err")" "agentrt-tool: tape '$BATS_TEST_TMPDIR/none': No such file or directory"
	req calc '{}' | tool_run -t "$examples" --record "$BATS_TEST_TMPDIR/no/such/tape"
	[ "$status" -eq 2 ]
	[ ! -s "$out" ]
	assert_eq "$(cat "$err")" "agentrt-tool: --record '$BATS_TEST_TMPDIR/no/such/tape': No such file or directory"
}

@test "--record never writes an environment secret" {
	export OPENAI_API_KEY=sk-sentinel-xyz ANTHROPIC_API_KEY=sk-sentinel-xyz
	export AGENTRT_SECRET=sk-sentinel-xyz
	tape=$BATS_TEST_TMPDIR/tape
	printf '#!/bin/sh\nenv\n' | tool env
	printf '#!/bin/sh\necho "$OPENAI_API_KEY" >&2\nexit 1\n' | tool fails
	printf '{env: env, ENV: $ENV}\n' >"$tools/envjq.jq"
	{ req env '{}' c1; req fails '{}' c2; req envjq '{}' c3; } |
	    tool_run -t "$tools" --record "$tape"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$tape")" -eq 3 ]
	grep -q PATH= "$tape"
	! grep -q sentinel "$tape" "$out" "$err" || false
}

# --- the allow-list ----------------------------------------------------

# areq NAME AGENT [ID] [ARGS]: req for tool NAME from a request whose
# agent is the JSON AGENT.
areq() {
	req "$1" "${4:-"{}"}" "${3:-c1}" | jq -c --argjson a "$2" '. + {agent: $a}'
}

# An executable tool NAME that leaves a marker when it runs.
marking_tool() {
	printf '#!/bin/sh\ntouch "%s/ran-%s"\necho ran\n' "$BATS_TEST_TMPDIR" "$1" |
	    tool "$1"
}

@test "a tool the request's agent does not declare is refused and never runs" {
	marking_tool evil
	areq evil '{"model":"mock/echo","tools":[{"name":"calc"},"upper"]}' |
	    tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(cat "$out")" '{"type":"decision.response","session_id":"s1","decision_id":"d-c1","actions":[{"type":"tool.error","error":"unknown tool: evil","retryable":false,"code":"unknown_tool"}]}'
	assert_eq "$(cat "$err")" "agentrt-tool: <stdin>:1: refused tool 'evil': the agent does not declare it"
	[ ! -e "$BATS_TEST_TMPDIR/ran-evil" ] || fail "the undeclared tool ran"
	# An agent with no tools at all declares none.
	areq evil '{"model":"mock/echo"}' | tool_run -t "$tools"
	assert_eq "$(jq -c '.actions[0].code' "$out")" '"unknown_tool"'
	[ ! -e "$BATS_TEST_TMPDIR/ran-evil" ] || fail "the undeclared tool ran"
}

@test "a declared tool runs, by name alone or as an object; a line with no agent is not checked" {
	marking_tool named
	marking_tool object
	marking_tool plain
	{ areq named '{"model":"m","tools":["named"]}' c1
	  areq object '{"model":"m","tools":[{"name":"object"}]}' c2
	  req plain '{}' c3; } | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c 'select(.type == "tool.result") | .id' "$out" | sort | tr '\n' ' ')" '"c1" "c2" "c3" '
	[ -e "$BATS_TEST_TMPDIR/ran-named" ] && [ -e "$BATS_TEST_TMPDIR/ran-object" ] &&
	    [ -e "$BATS_TEST_TMPDIR/ran-plain" ]
	[ ! -s "$err" ]
	# A declared tool that no directory has is passed on, as before.
	areq elsewhere '{"model":"m","tools":["elsewhere"]}' | tool_run -t "$tools"
	assert_eq "$(jq -c '.trigger.name' "$out")" '"elsewhere"'
}

@test "a jq tool and a replayed call are refused alike when undeclared" {
	tape=$BATS_TEST_TMPDIR/tape
	req calc '{"expr":"6*7"}' | tool_run -t "$examples" --record "$tape"
	[ "$(wc -l <"$tape")" -eq 1 ]
	areq calc '{"model":"m","tools":["upper"]}' c1 '{"expr":"6*7"}' |
	    tool_run --replay "$tape"
	assert_eq "$(jq -c '.actions' "$out")" '[{"type":"tool.error","error":"unknown tool: calc","retryable":false,"code":"unknown_tool"}]'
	areq calc '{"model":"m","tools":["calc"]}' c1 '{"expr":"6*7"}' |
	    tool_run --replay "$tape"
	assert_eq "$(jq -c '.actions[0].result' "$out")" '"42"'
	areq upper '{"model":"m","tools":["calc"]}' | tool_run -t "$examples"
	assert_eq "$(jq -c '.actions[0].error' "$out")" '"unknown tool: upper"'
}

@test "a by-reference request whose store cannot be read runs nothing" {
	marking_tool evil
	req evil '{}' | jq -c --arg s "$BATS_TEST_TMPDIR/nostore" \
	    '. + {ref: {store: $s, head: null, seq: 3}}' | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '.actions[0] | [.code, .retryable, (.error | startswith("cannot check tool '"'evil'"' against the agent: "))]' "$out")" '["bad_request",false,true]'
	[[ "$(cat "$err")" == "agentrt-tool: <stdin>:1: tool 'evil': read the agent from the store: "* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran-evil" ] || fail "the tool ran"
	# A session the store does not have has no agent, so declares nothing.
	agentrt-session new --id other >/dev/null
	req evil '{}' | jq -c --arg s "$AGENTRT_DB" \
	    '. + {ref: {store: $s, head: null, seq: 3}}' | tool_run -t "$tools"
	assert_eq "$(jq -c '.actions[0].code' "$out")" '"unknown_tool"'
	[ ! -e "$BATS_TEST_TMPDIR/ran-evil" ] || fail "the tool ran"
}

# --- passing variables through -----------------------------------------

# A tool printing the variables it was given, one a line, sorted.
env_tool() {
	printf '#!/bin/sh\nenv | sort\n' | tool "$1"
}

# result ID: the result of call ID, as text.
result() {
	jq -r --arg id "$1" 'select(.type == "tool.result" and .id == $id) | .result' "$out"
}

@test "--env passes a variable through; a provider key is never passed" {
	env_tool pe
	export MEMORY_FILE_PATH=/m/f OTHER=o
	export OPENAI_API_KEY=sk-proj-SENTINELsecret0000000000000000
	export ANTHROPIC_AUTH_TOKEN=SENTINEL-token
	req pe '{}' c1 | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	result c1 >"$BATS_TEST_TMPDIR/without"
	grep -q '^PATH=' "$BATS_TEST_TMPDIR/without"
	! grep -q '^MEMORY_FILE_PATH=' "$BATS_TEST_TMPDIR/without" || fail "passed unasked"
	req pe '{}' c2 | tool_run -t "$tools" --env MEMORY_FILE_PATH --env UNSET_ONE
	[ "$status" -eq 0 ]
	result c2 >"$BATS_TEST_TMPDIR/with"
	grep -qx 'MEMORY_FILE_PATH=/m/f' "$BATS_TEST_TMPDIR/with"
	! grep -q '^OTHER=\|^UNSET_ONE' "$BATS_TEST_TMPDIR/with" || fail "$(cat "$BATS_TEST_TMPDIR/with")"
	! grep -q SENTINEL "$out" "$err" || fail "a key got through"
}

@test "a declaration's env passes its variables to that tool alone" {
	env_tool pe
	env_tool other
	export MEMORY_FILE_PATH=/m/f FROM_FILE=ff
	export OPENAI_API_KEY=sk-proj-SENTINELsecret0000000000000000
	echo '{"description":"prints","env":["FROM_FILE","OPENAI_API_KEY"]}' >"$tools/pe.json"
	{ areq pe '{"model":"m","tools":[{"name":"pe","env":["MEMORY_FILE_PATH","OPENAI_API_KEY"]},"other"]}' c1
	  areq pe '{"model":"m","tools":["pe"]}' c2
	  req pe '{}' c3
	  areq other '{"model":"m","tools":[{"name":"pe","env":["MEMORY_FILE_PATH"]},"other"]}' c4
	} | tool_run -t "$tools"
	[ "$status" -eq 0 ]
	# The agent's declaration, which replaces the file's.
	result c1 | grep -qx 'MEMORY_FILE_PATH=/m/f'
	! result c1 | grep -q '^FROM_FILE=' || fail "the file's env with the agent's object"
	# The name alone, or no agent: the declaration file's.
	result c2 | grep -qx 'FROM_FILE=ff'
	result c3 | grep -qx 'FROM_FILE=ff'
	! result c2 | grep -q '^MEMORY_FILE_PATH=' || fail "passed unasked"
	# Another tool gets none of it.
	! result c4 | grep -q '^MEMORY_FILE_PATH=\|^FROM_FILE=' || fail "$(result c4)"
	! grep -q SENTINEL "$out" "$err" || fail "a key got through"
}

@test "--env refuses a provider key and a bad name, reading nothing" {
	for v in OPENAI_API_KEY ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN; do
		req calc '{}' | tool_run -t "$examples" --env "$v"
		[ "$status" -eq 2 ]
		[ ! -s "$out" ]
		assert_eq "$(cat "$err")" "agentrt-tool: bad --env: '$v': a provider key is never passed to a tool"
	done
	for v in 1X A-B ''; do
		req calc '{}' | tool_run -t "$examples" --env "$v"
		[ "$status" -eq 2 ]
		assert_eq "$(cat "$err")" "agentrt-tool: bad --env: '$v': not an environment variable name"
	done
}

@test "a reader that goes away ends it quietly, of SIGPIPE, as the other filters" {
	for i in $(seq 1 20000); do
		echo '{"type":"note","n":1,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}'
	done >"$BATS_TEST_TMPDIR/many"
	agentrt-tool -t "$tools" <"$BATS_TEST_TMPDIR/many" 2>"$err" | head -1 >"$out"
	st=${PIPESTATUS[0]}
	agentrt-llm <"$BATS_TEST_TMPDIR/many" 2>/dev/null | head -1 >/dev/null
	want=${PIPESTATUS[0]}
	assert_eq "$(jq -r .type "$out")" note
	assert_eq "$st" "$want"
	assert_eq "$st" 141
	assert_eq "$(cat "$err")" ""
}
