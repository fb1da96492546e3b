#!/usr/bin/env bats
# agentrt-llm: model calls answered by the mock provider, pass-through,
# error lines, delays, streaming, options and exit status

load lib

user='[{"role":"user","content":"What is 17*23?"}]'
# The same turn after one model call asked for a tool and got 391 back.
loop1='[{"role":"user","content":"What is 17*23?"},
	{"role":"assistant","tool_calls":[]},
	{"role":"tool","tool_call_id":"call_x","content":"391"}]'

# request ID MODEL MESSAGES [JQ]: an llm.request line for session s1,
# attempt 1; JQ (say '.stream = true') edits it.
request() {
	jq -nc --arg id "$1" --arg model "$2" --argjson m "$3" \
	    "{type: \"llm.request\", session_id: \"s1\", id: \$id, attempt: 1,
	      request: {model: \$model, messages: \$m}} | ${4:-.}"
}

# scripted ID MESSAGES SCRIPT [JQ]: a mock/script request whose mock
# settings carry SCRIPT, as the engine copies them from the agent.
scripted() {
	request "$1" mock/script "$2" ".mock = {script: $3} | ${4:-.}"
}

# execute DECISION ID MESSAGES AGENT [JQ]: a decision.request for
# llm.execute, as the engine sends a worker-run model call.
execute() {
	jq -nc --arg d "$1" --arg id "$2" --argjson m "$3" --argjson a "$4" \
	    "{type: \"decision.request\", session_id: \"s1\", decision_id: \$d,
	      agent_id: \"calc\", agent: \$a, state: null, messages: [],
	      trigger: {type: \"llm.execute\", id: \$id, attempt: 1,
	        stream: false, request: {model: \"mock/script\",
	        messages: \$m}}} | ${5:-.}"
}

# Runs agentrt-llm ARGS on the file in, into out and err; status in rc.
llm() {
	rc=0
	agentrt-llm "$@" <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" \
	    2>"$BATS_TEST_TMPDIR/err" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	err=$BATS_TEST_TMPDIR/err
}

input() {
	cat >"$BATS_TEST_TMPDIR/in"
}

# The N-th line of out (from 1).
line() {
	sed -n "${1}p" "$out"
}

# --- help, version, usage ------------------------------------------------

@test "--help prints the usage on stdout and exits 0" {
	run agentrt-llm --help
	[ "$status" -eq 0 ]
	assert_eq "${lines[0]}" "Usage: agentrt-llm [OPTIONS] [FILE...]"
	[[ "$output" == *"-m, --model MODEL"* ]]
	[[ "$output" == *"--script FILE"* ]]
	[[ "$output" == *"--max-line BYTES"* ]]
	[[ "$output" == *"mock/echo, mock/script"* ]]
}

@test "--help lists the options in the order of the man page's OPTIONS" {
	local man=$top_srcdir/man/agentrt-llm.1 want got
	want=$(sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$man" |
	    grep -oE '^\.It Fl .*' | grep -oE 'Fl -[a-z-]+' | sed 's/Fl /-/')
	got=$(agentrt-llm --help | grep -oE -- '^ +(-[a-zA-Z], )?--[a-z-]+' |
	    grep -oE -- '--[a-z-]+')
	[ -n "$want" ]
	assert_eq "$got" "$want"
}

@test "--version names the program, the version and the libraries' versions" {
	run agentrt-llm --version
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" =~ ^agentrt-llm\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	# The libraries it links, as curl names them, at their versions.
	v='[0-9]+\.[0-9]+(\.[0-9]+)?'
	[[ "${lines[1]}" =~ ^libjq/$v\ libcurl/$v$ ]] || fail "${lines[1]}"
	run agentrt-llm -V
	[ "$status" -eq 0 ]
}

@test "a bad option is a usage error and nothing is read" {
	request r1 mock/echo "$user" | input
	llm --bogus
	[ "$rc" -eq 2 ]
	[ ! -s "$out" ]
	grep -qF 'usage: agentrt-llm [-m MODEL] [--script FILE]' "$err"
	grep -qF "Try 'agentrt-llm --help' for more information." "$err"
}

@test "bad option values are usage errors, named" {
	: | input
	llm --max-line 0
	[ "$rc" -eq 2 ]
	grep -qxF "agentrt-llm: bad --max-line '0': expected a size such as 64M or 1T" "$err"
	llm --max-line 12Q
	[ "$rc" -eq 2 ]
	llm --model echo
	[ "$rc" -eq 2 ]
	grep -qxF "agentrt-llm: bad --model: model 'echo' is not provider/name" "$err"
	llm -m nope/x
	[ "$rc" -eq 2 ]
	grep -qxF "agentrt-llm: bad --model: unknown provider 'nope' in model 'nope/x'" "$err"
	llm --model
	[ "$rc" -eq 2 ]
}

@test "an unreadable or bad --script is a usage error" {
	: | input
	llm --script "$BATS_TEST_TMPDIR/none.json"
	[ "$rc" -eq 2 ]
	assert_eq "$(cat "$err")" "agentrt-llm: read mock script '$BATS_TEST_TMPDIR/none.json': No such file or directory"
	echo '{"content":"x"}' >"$BATS_TEST_TMPDIR/obj.json"
	llm --script "$BATS_TEST_TMPDIR/obj.json"
	[ "$rc" -eq 2 ]
	grep -qF "expected an array, got object" "$err"
	echo '[{"content":' >"$BATS_TEST_TMPDIR/bad.json"
	llm --script "$BATS_TEST_TMPDIR/bad.json"
	[ "$rc" -eq 2 ]
	grep -qF "mock script '$BATS_TEST_TMPDIR/bad.json': " "$err"
}

# --- mock/echo -----------------------------------------------------------

@test "mock/echo answers with the last user message" {
	request r1 mock/echo '[{"role":"user","content":"first"},
	    {"role":"assistant","content":"ok"},
	    {"role":"user","content":[{"type":"text","text":"hel"},
	      {"type":"text","text":"lo"}]}]' | input
	llm
	[ "$rc" -eq 0 ]
	[ ! -s "$err" ]
	assert_eq "$(cat "$out")" '{"type":"llm.result","session_id":"s1","id":"r1","attempt":1,"response":{"model":"mock/echo","content":"hello","finish_reason":"stop","usage":{"input":3,"output":2,"total":5},"cost":"0"}}'
}

@test "mock/echo with no user message answers the empty string" {
	request r1 mock/echo '[{"role":"system","content":"be brief"}]' | input
	llm
	assert_eq "$(jq -c '[.type, .response.content]' "$out")" '["llm.result",""]'
}

# --- mock/script ---------------------------------------------------------

@test "a script in the request's mock settings is played" {
	scripted r1 "$user" '[{content: "Let me think."}]' | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '.response | [.model, .content, .finish_reason]' "$out")" \
	    '["mock/script","Let me think.","stop"]'
}

@test "a script_file is read relative to the current directory" {
	mkdir "$BATS_TEST_TMPDIR/agent"
	echo '[{"content":"from the file"}]' >"$BATS_TEST_TMPDIR/agent/s.json"
	request r1 mock/script "$user" '.mock = {script_file: "s.json"}' | input
	cd "$BATS_TEST_TMPDIR/agent"
	llm
	assert_eq "$(jq -r .response.content "$out")" "from the file"
	cd "$BATS_TEST_TMPDIR"
	llm
	assert_eq "$(jq -r '[.type, .error, .retryable] | @tsv' "$out")" \
	    "$(printf 'llm.error\tread mock script %s: No such file or directory\tfalse' "'s.json'")"
}

@test "--script overrides the request's script" {
	echo '[{"content":"from --script"}]' >"$BATS_TEST_TMPDIR/s.json"
	scripted r1 "$user" '[{content: "from the agent"}]' | input
	llm --script "$BATS_TEST_TMPDIR/s.json"
	assert_eq "$(jq -r .response.content "$out")" "from --script"
}

@test "a tool loop advances one step per model call, filling the templates" {
	local s='[{tool_calls: [{name: "calc", arguments: {expr: "17*23"}}]},
	    {content: "{{user}} is {{tool}}"}]'
	{ scripted 0197ab12-0000-7000-8000-00000000abcd "$user" "$s"
	  scripted r2 "$loop1" "$s"; } | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(line 1 | jq -c .response)" '{"model":"mock/script","tool_calls":[{"id":"call_0000abcd_0_0","type":"function","function":{"name":"calc","arguments":"{\"expr\":\"17*23\"}"}}],"finish_reason":"tool_calls","usage":{"input":4,"output":5,"total":9},"cost":"0"}'
	assert_eq "$(line 2 | jq -r .response.content)" "What is 17*23? is 391"
}

@test "two tool calls in one step are parallel tool calls with their own ids" {
	scripted req-0001 "$user" '[{content: "Both at once.", tool_calls: [
	    {name: "calc", arguments: {a: 17, b: 23}},
	    {name: "lookup", arguments: "raw text"}]}]' | input
	llm
	assert_eq "$(jq -c '.response | [.content, .finish_reason,
	    [.tool_calls[] | [.id, .type, .function.name, .function.arguments]]]' "$out")" \
	    '["Both at once.","tool_calls",[["call_req-0001_0_0","function","calc","{\"a\":17,\"b\":23}"],["call_req-0001_0_1","function","lookup","raw text"]]]'
}

@test "tool call ids differ between turns" {
	local s='[{tool_calls: [{name: "t"}]}]'
	{ scripted 0197ab12-0000-7000-8000-000000000001 "$user" "$s"
	  scripted 0197ab12-0000-7000-8000-000000000002 "$user" "$s"; } | input
	llm
	assert_eq "$(jq -r '.response.tool_calls[0].id' "$out" | sort -u | wc -l)" 2
}

@test "an error step fails its first attempts, then succeeds" {
	local s='[{error: "slow down", retryable: true, code: "rate_limited",
	    retry_after_ms: 250, times: 2, content: "finally"}]'
	for n in 1 2 3; do
		scripted r1 "$user" "$s" ".attempt = $n"
	done | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(line 1)" '{"type":"llm.error","session_id":"s1","id":"r1","attempt":1,"error":"slow down","retryable":true,"code":"rate_limited","retry_after_ms":250}'
	assert_eq "$(line 2 | jq -c '[.type, .attempt]')" '["llm.error",2]'
	assert_eq "$(line 3 | jq -c '[.type, .attempt, .response.content]')" '["llm.result",3,"finally"]'
}

@test "finish_reason length makes a truncated reply" {
	scripted r1 "$user" '[{content: "cut sh", finish_reason: "length"}]' | input
	llm
	assert_eq "$(jq -c '.response | [.content, .finish_reason]' "$out")" '["cut sh","length"]'
}

@test "a call past the end of the script is a terminal llm.error" {
	scripted r1 "$loop1" '[{content: "only one"}]' | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(cat "$out")" '{"type":"llm.error","session_id":"s1","id":"r1","attempt":1,"error":"mock script has no step 1","retryable":false}'
}

@test "a bad step, no script, or an unknown mock model is an llm.error" {
	{ scripted r1 "$user" '[{contents: "typo"}]'
	  request r2 mock/script "$user"
	  request r3 mock/nope "$user"
	  request r4 mock/echo "$user" '.format = "openai"'; } | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r '[.id, .type, .error, .retryable] | @tsv' "$out")" \
	    "$(printf '%s\t%s\t%s\t%s\n' \
		r1 llm.error "mock script step 0: unknown field 'contents'" false \
		r2 llm.error "mock/script has no script: set mock.script or mock.script_file in the agent, or give --script" false \
		r3 llm.error "unknown mock model 'mock/nope' (there are mock/echo and mock/script)" false \
		r4 llm.error "mock models take no format ('openai')" false)"
}

# --- providers -----------------------------------------------------------

@test "an unknown provider is a terminal llm.error, marked a config error" {
	{ request r1 nope/gpt-4o-mini "$user"
	  request r2 gpt-4o "$user"; } | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(line 1)" '{"type":"llm.error","session_id":"s1","id":"r1","attempt":1,"error":"unknown provider '"'nope'"' in model '"'nope/gpt-4o-mini'"'","retryable":false,"detail":{"config":"bad_model"}}'
	assert_eq "$(line 2 | jq -c '[.error, .detail]')" \
	    '["model '"'gpt-4o'"' is not provider/name",{"config":"bad_model"}]'
}

@test "--model runs a request written for another model on the mock" {
	request r1 openai/gpt-4o-mini "$user" | input
	llm --model mock/echo
	assert_eq "$(jq -c '.response | [.model, .content]' "$out")" '["mock/echo","What is 17*23?"]'
}

# --- delays --------------------------------------------------------------

@test "a delayed answer does not hold up later lines, and is not lost at EOF" {
	{ scripted slow "$user" '[{content: "late", delay_ms: 300}]'
	  request fast mock/echo "$user"
	  echo '{"type":"note","n":1}'; } | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[.type, .id, .n]' "$out")" \
	    "$(printf '%s\n' '["llm.result","fast",null]' '["note",null,1]' '["llm.result","slow",null]')"
}

@test "delayed answers go out in the order they fall due" {
	{ scripted a "$user" '[{content: "a", delay_ms: 300}]'
	  scripted b "$user" '[{error: "b", delay_ms: 100}]'
	  scripted c "$user" '[{content: "c", delay_ms: 200}]'; } | input
	llm
	assert_eq "$(jq -r .id "$out" | tr '\n' ' ')" "b c a "
}

@test "lines keep being answered while a delayed answer waits on an open input" {
	local fifo=$BATS_TEST_TMPDIR/fifo o=$BATS_TEST_TMPDIR/out pid fd
	mkfifo "$fifo"
	agentrt-llm <"$fifo" >"$o" &
	pid=$!
	exec {fd}>"$fifo"
	scripted slow "$user" '[{content: "late", delay_ms: 1500}]' >&$fd
	request fast mock/echo "$user" >&$fd
	wait_lines "$o" 1
	assert_eq "$(jq -r .id "$o")" fast
	exec {fd}>&-
	wait "$pid"
	assert_eq "$(jq -r .id "$o" | tr '\n' ' ')" "fast slow "
}

# --- streaming -----------------------------------------------------------

@test "a streaming call sends deltas that join to the final content" {
	scripted r1 "$user" '[{content: "The answer  is 391."}]' '.stream = true' | input
	llm
	[ "$rc" -eq 0 ]
	[ "$(wc -l <"$out")" -ge 3 ]
	assert_eq "$(head -n -1 "$out" | jq -r '[.type, .session_id, .id] | @tsv' | sort -u)" \
	    "$(printf 'llm.token.delta\ts1\tr1')"
	assert_eq "$(head -n -1 "$out" | jq -j .delta.text)" "The answer  is 391."
	assert_eq "$(tail -n 1 "$out" | jq -r '[.type, .response.content] | @tsv')" \
	    "$(printf 'llm.result\tThe answer  is 391.')"
}

@test "a streaming tool call sends a tool call delta" {
	scripted r1 "$user" '[{tool_calls: [{name: "calc", arguments: {x: 1}}]}]' \
	    '.stream = true' | input
	llm
	assert_eq "$(line 1 | jq -c .delta)" '{"tool_calls":[{"id":"call_r1_0_0","name":"calc","arguments":"{\"x\":1}"}]}'
	assert_eq "$(line 2 | jq -r .type)" llm.result
}

@test "a streaming call that fails sends no deltas" {
	scripted r1 "$user" '[{error: "no"}]' '.stream = true' | input
	llm
	assert_eq "$(jq -r .type "$out")" llm.error
}

# --- llm.execute decisions -----------------------------------------------

@test "an llm.execute decision is answered with a decision.response" {
	execute d1 c1 "$user" '{"model":"mock/script","mock":{"script":[{"content":"from the worker"}]}}' | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(cat "$out")" '{"type":"decision.response","session_id":"s1","decision_id":"d1","actions":[{"type":"llm.result","id":"c1","attempt":1,"response":{"model":"mock/script","content":"from the worker","finish_reason":"stop","usage":{"input":4,"output":4,"total":8},"cost":"0"}}]}'
}

@test "an llm.execute decision streams, and fails with an llm.error action" {
	{ execute d1 c1 "$user" '{"mock":{"script":[{"content":"a b"}]}}' \
	    '.trigger.stream = true'
	  execute d2 c2 "$user" '{"mock":{"script":[{"error":"busy","retryable":true}]}}' \
	    '.trigger.attempt = 2'; } | input
	llm
	assert_eq "$(jq -c 'select(.type == "llm.token.delta") | [.id, .delta.text]' "$out")" \
	    "$(printf '%s\n' '["c1","a "]' '["c1","b"]')"
	assert_eq "$(jq -c 'select(.decision_id == "d2") | .actions' "$out")" \
	    '[{"type":"llm.error","id":"c2","attempt":2,"error":"busy","retryable":true}]'
}

# --- pass-through and bad lines ------------------------------------------

@test "other lines pass through unchanged and in order" {
	{ echo '{"type":"client.message","session_id":"s1","message":{"role":"user","content":"hi"}}'
	  echo '{"type":"decision.request","session_id":"s1","decision_id":"d0","trigger":{"type":"tool.execute","id":"t1","name":"calc","arguments":"{}"}}'
	  request r1 mock/echo "$user"
	  echo '{"type":"llm.result","session_id":"s1","id":"x","attempt":1,"response":{"model":"m"}}'
	  echo '{"type":"llm.token.delta","id":"x","delta":{"text":"é ☃"}}'
	  echo '{"type":"something.new","a":[1,2.5,{"b":null}],"z":true}'
	} | input
	llm
	[ "$rc" -eq 0 ]
	[ "$(wc -l <"$out")" -eq 6 ]
	assert_eq "$(sed 3d "$out")" "$(sed 3d "$BATS_TEST_TMPDIR/in")"
	assert_eq "$(line 3 | jq -r .type)" llm.result
}

@test "bad lines become error lines and the stage goes on" {
	{ echo 'not json'
	  echo '[1,2]'
	  echo '{"no":"type"}'
	  echo '{"type":"llm.request","session_id":"s9","request":{}}'
	  echo '{"type":"llm.request","id":"r0","request":"hi"}'
	  echo '{"type":"decision.request","decision_id":"d","trigger":{"type":"llm.execute","request":{}}}'
	  request r1 mock/echo "$user"; } | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r '[.type, .code] | @tsv' "$out")" "$(printf '%s\n' \
	    'error	bad_json' 'error	not_object' 'error	no_type' \
	    'error	bad_request' 'error	bad_request' 'error	bad_request' \
	    'llm.result	')"
	assert_eq "$(line 4)" '{"type":"error","code":"bad_request","message":"<stdin>:4: llm.request: missing field '"'id'"'","input":"{\"type\":\"llm.request\",\"session_id\":\"s9\",\"request\":{}}","session_id":"s9"}'
	assert_eq "$(line 5 | jq -r .message)" "<stdin>:5: llm.request: field 'request': expected object, got string"
	assert_eq "$(line 6 | jq -r .message)" "<stdin>:6: llm.execute decision: trigger: missing field 'id'"
	[ "$(wc -l <"$err")" -eq 6 ]
	assert_eq "$(sed -n 4p "$err")" "agentrt-llm: <stdin>:4: llm.request: missing field 'id'"
	grep -q '^agentrt-llm: <stdin>:1: ' "$err"
}

@test "a type holding a NUL is a bad line, never a model call" {
	{ request r0 mock/echo "$user" '.type = "llm.request\u0000x"'
	  request r1 mock/echo "$user" \
	      '{type: "decision.request", session_id, decision_id: "d1",
	        trigger: (. + {type: "llm.execute\u0000x"})}'
	  request r2 mock/echo "$user"; } | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r '[.type, .code // .id // .decision_id] | @tsv' "$out")" \
	    "$(printf 'error\tbad_type\ndecision.request\td1\nllm.result\tr2')"
	assert_eq "$(line 1 | jq -r .message)" \
	    '<stdin>:1: line'\''s "type" "llm.request\u0000x" holds a NUL byte'
	assert_eq "$(line 1 | jq -r .input)" "$(sed -n 1p "$BATS_TEST_TMPDIR/in")"
	# A trigger's type holding a NUL is no llm.execute: passed on as read.
	assert_eq "$(line 2)" "$(sed -n 2p "$BATS_TEST_TMPDIR/in")"
	assert_eq "$(cat "$err")" \
	    'agentrt-llm: <stdin>:1: line'\''s "type" "llm.request\u0000x" holds a NUL byte'
}

@test "a line over --max-line is an error line, and the next is answered" {
	{ printf '{"type":"note","pad":"%0200d"}\n' 0
	  request r1 mock/echo "$user"; } | input
	llm --max-line 150
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r '[.type, .code // .id] | @tsv' "$out")" \
	    "$(printf 'error\tline_too_long\nllm.result\tr1')"
	grep -qF '<stdin>:1: line is longer than 150 bytes' "$err"
}

@test "lines of several MiB pass through a slow reader while an answer waits" {
	local big=$BATS_TEST_TMPDIR/big
	jq -nc '{type: "note", text: ("x" * 4194304)}' >"$big"
	{ scripted slow "$user" '[{content: "late", delay_ms: 100}]'
	  cat "$big" "$big"
	  request fast mock/echo "$user"; } | input
	agentrt-llm <"$BATS_TEST_TMPDIR/in" | { sleep 0.2; cat; } >"$BATS_TEST_TMPDIR/out"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/out")" -eq 4 ]
	cmp <(grep '"note"' "$BATS_TEST_TMPDIR/out") <(cat "$big" "$big")
	# Reading 8 MiB may take longer than the delay: either order is right.
	assert_eq "$(grep -v '"note"' "$BATS_TEST_TMPDIR/out" | jq -r .id | sort | tr '\n' ' ')" "fast slow "
}

@test "a model request is parsed once, not scanned first: a broken one is still a bad_json line" {
	{ echo '{"type":"llm.request","id":"r0","request":{"model":"mock/echo","messages":[}}'
	  request r1 mock/echo "$user"; } | input
	llm
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r '[.type, .code // .id] | @tsv' "$out")" "$(printf '%s\n' 'error	bad_json' 'llm.result	r1')"
	[[ "$(line 1 | jq -r .message)" == "<stdin>:1: not valid JSON: "* ]] || fail "$(line 1)"
	assert_eq "$(line 1 | jq -r .input)" '{"type":"llm.request","id":"r0","request":{"model":"mock/echo","messages":[}}'
}

# --- files and failures --------------------------------------------------

@test "FILE operands are read in turn; '-' is the standard input" {
	request a mock/echo "$user" >"$BATS_TEST_TMPDIR/a.ndjson"
	echo '{"type":"bad"' >>"$BATS_TEST_TMPDIR/a.ndjson"
	request c mock/echo "$user" >"$BATS_TEST_TMPDIR/c.ndjson"
	request b mock/echo "$user" | input
	llm "$BATS_TEST_TMPDIR/a.ndjson" - "$BATS_TEST_TMPDIR/c.ndjson"
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r '.id // .code' "$out" | tr '\n' ' ')" "a bad_json b c "
	[[ "$(line 2 | jq -r .message)" == "$BATS_TEST_TMPDIR/a.ndjson:2: not valid JSON: "* ]]
}

@test "a FILE that cannot be opened is named, the rest are read, and the status is 1" {
	request a mock/echo "$user" >"$BATS_TEST_TMPDIR/a.ndjson"
	: | input
	llm "$BATS_TEST_TMPDIR/missing.ndjson" "$BATS_TEST_TMPDIR/a.ndjson"
	[ "$rc" -eq 1 ]
	assert_eq "$(cat "$err")" "agentrt-llm: open '$BATS_TEST_TMPDIR/missing.ndjson': No such file or directory"
	assert_eq "$(jq -r .id "$out")" a
}

@test "a failed write exits 1 with a message" {
	[ -w /dev/full ] || skip "no /dev/full"
	request r1 mock/echo "$user" | input
	llm_full() {
		agentrt-llm "$@" <"$BATS_TEST_TMPDIR/in" >/dev/full
	}
	run llm_full
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-llm: write: No space left on device"
	echo '{"type":"note"}' | input
	run llm_full
	[ "$status" -eq 1 ]
	scripted r1 "$user" '[{content: "late", delay_ms: 50}]' | input
	run llm_full
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-llm: write: No space left on device"
}

@test "empty input is a clean exit" {
	: | input
	llm
	[ "$rc" -eq 0 ]
	[ ! -s "$out" ]
	[ ! -s "$err" ]
}

# --- the manual ----------------------------------------------------------

# The EXAMPLES section runs as written, so the manual cannot drift.
@test "the man page's EXAMPLES run and succeed" {
	script=$BATS_TEST_TMPDIR/examples.sh
	{
		echo 'set -euo pipefail'
		awk '/^\.Sh EXAMPLES/ { on = 1; next } /^\.Sh / { on = 0 }
		    on && /^\.Bd -literal/ { lit = 1; next }
		    on && /^\.Ed/ { lit = 0; next }
		    on && lit { print; next }
		    on && /^\.Dl / { sub(/^\.Dl /, ""); print }' \
		    "$top_srcdir/man/agentrt-llm.1" |
			sed -e 's/\\e/\\/g' -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g"
	} >"$script"
	[ "$(grep -c agentrt-llm "$script")" -ge 5 ]
	cd "$BATS_TEST_TMPDIR"
	run bash "$script"
	[ "$status" -eq 0 ] || fail "examples failed: $output"
	[[ "$output" == hello$'\n'* ]]
	[[ "$output" == *'"content":"17*23 = 391"'* ]]
	[[ "$output" == *'["llm.token.delta","one "]'* ]]
	[[ "$output" == *'["llm.result",3,"done"]'* ]]
	[[ "$output" == *$'fast\nslow' ]]
}

@test "groff -mandoc -ww -z prints nothing for the man page" {
	command -v groff >/dev/null || skip "groff is not installed"
	run groff -mandoc -ww -z "$top_srcdir/man/agentrt-llm.1"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# --- --record and the security pipeline ---------------------------------

# A fake key built here, never a real one.
sentinel_key() {
	printf 'sk-proj-%s%s' SENTINEL secret0000000000000000
}

@test "--record with the agent's security object keeps no redacted secret" {
	key=$(sentinel_key)
	tape=$BATS_TEST_TMPDIR/tape
	# The mock streams word by word, so the bearer header and its token
	# come in separate deltas: only the joined text shows a credential.
	scripted r1 "$user" "[{content: \"key $key and Authorization: Bearer SENTINELtoken0000 ok\",
	    tool_calls: [{name: \"calc\", arguments: {expr: \"$key\"}}]}]" \
	    '.stream = true | .security = {}' | input
	llm --record "$tape"
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$err")"
	[ "$(wc -l <"$tape")" -eq 1 ]
	! grep -q SENTINEL "$tape" || fail "a secret in the cassette: $(cat "$tape")"
	assert_eq "$(jq -r .response.content "$tape")" \
	    'key [redacted:openai_key] and Authorization: Bearer [redacted:bearer_token] ok'
	assert_eq "$(jq -r '[.deltas[].text // empty] | add' "$tape")" \
	    "$(jq -r .response.content "$tape")"
	assert_eq "$(jq -r '.response.tool_calls[0].function.arguments' "$tape")" \
	    '{"expr":"[redacted:openai_key]"}'
	assert_eq "$(jq -r '[.deltas[].tool_calls[]?.arguments] | add' "$tape")" \
	    '{"expr":"[redacted:openai_key]"}'
	# The answer on the bus is the engine's to screen; it goes as it came.
	grep -q SENTINEL "$out"
}

@test "--record without a security object records the reply as it came" {
	key=$(sentinel_key)
	tape=$BATS_TEST_TMPDIR/tape
	scripted r1 "$user" "[{content: \"key $key\"}]" | input
	llm --record "$tape"
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r .response.content "$tape")" "key $key"
}

@test "--record with a strict pipeline keeps a blocked reply, to block again on replay" {
	key=$(sentinel_key)
	tape=$BATS_TEST_TMPDIR/tape
	scripted r1 "$user" "[{content: \"key $key\"}]" \
	    '.security = {output_filter_mode: "strict"}' | input
	llm --record "$tape"
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r .response.content "$tape")" "key $key"
}

@test "--record with a bad security object records nothing and says why" {
	tape=$BATS_TEST_TMPDIR/tape
	scripted r1 "$user" '[{content: "hi"}]' \
	    '.security = {redact_secret: true}' | input
	llm --record "$tape"
	[ "$rc" -eq 0 ]
	[ ! -s "$tape" ]
	grep -q '"code":"record_failed"' "$out"
	grep -q "unknown member 'redact_secret'" "$out"
}
