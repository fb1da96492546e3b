#!/usr/bin/env bats
# agentrt-decide: proposals, jq programs, pass-through, error lines, policies

load lib

dfix=$fixtures/decide
policies=$top_srcdir/examples/policies
man1=$top_srcdir/man/agentrt-decide.1

# req DECISION_ID [JSON members to add]: one decision.request line.
req() {
	jq -cn --arg d "$1" --argjson more "${2:-{\}}" \
	    '{type: "decision.request", session_id: "s1", decision_id: $d,
	      agent_id: "calc", trigger: {type: "session.start"},
	      proposed: {}} + $more'
}

# Runs agentrt-decide with the arguments given, stdin from $in, keeping
# stdout in $out and stderr in $err; $status is its exit status.
decide() {
	out=$BATS_TEST_TMPDIR/out err=$BATS_TEST_TMPDIR/err
	status=0
	agentrt-decide "$@" <"$in" >"$out" 2>"$err" || status=$?
}

setup() {
	in=$BATS_TEST_TMPDIR/in
}

@test "--help prints the usage on stdout and exits 0" {
	run agentrt-decide --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Usage: agentrt-decide [--jq PROGRAM | -f FILE | --exec COMMAND | --url URL]" ]]
	[[ "$output" == *"--argjson NAME JSON"* ]]
	run agentrt-decide -h
	[ "$status" -eq 0 ]
}

@test "--version names the program, the version and the libraries' versions" {
	run agentrt-decide --version
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" =~ ^agentrt-decide\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	# The libraries it links, as curl names them, at their versions.
	v='[0-9]+\.[0-9]+(\.[0-9]+)?'
	[[ "${lines[1]}" =~ ^libjq/$v\ LMDB/$v\ libcurl/$v$ ]] || fail "${lines[1]}"
}

@test "every long option in --help is in OPTIONS, in the same order" {
	local help man
	help=$(agentrt-decide --help | grep -oE -- '^ +(-[a-zA-Z], )?--[a-z-]+' |
	    grep -oE -- '--[a-z-]+')
	man=$(sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$man1" |
	    grep -E '^\.It Fl' | grep -oE -- 'Fl -[a-z-]+' | sed 's/^Fl /-/')
	[ -n "$help" ]
	assert_eq "$man" "$help"
}

@test "usage errors exit 2 with a message or the usage line" {
	req d1 >"$in"
	run agentrt-decide --bogus <"$in"
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: agentrt-decide"* ]]
	[[ "$output" == *"Try 'agentrt-decide --help'"* ]]
	run agentrt-decide --jq . -f x.jq <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: give one of --jq, -f, --exec and --url" ]]
	run agentrt-decide --jq . --arg name <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: option '--arg' needs two arguments" ]]
	run agentrt-decide --arg a b <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == *"need a program (--jq or -f)" ]]
	run agentrt-decide --jq . --argjson n '{bad' <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: bad --argjson n: "* ]]
	run agentrt-decide --max-line 12Q <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: bad --max-line '12Q': expected a size such as 64M or 1T" ]]
	run agentrt-decide --max-line 0 <"$in"
	[ "$status" -eq 2 ]
	run agentrt-decide -f "$BATS_TEST_TMPDIR/none.jq" <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: read program '$BATS_TEST_TMPDIR/none.jq': No such file or directory" ]]
	run agentrt-decide --jq . --rawfile t "$BATS_TEST_TMPDIR/none" <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: read --rawfile '$BATS_TEST_TMPDIR/none': No such file or directory" ]]
	printf '[1,\n' >"$BATS_TEST_TMPDIR/bad.json"
	run agentrt-decide --jq . --slurpfile t "$BATS_TEST_TMPDIR/bad.json" <"$in"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: bad --slurpfile t '$BATS_TEST_TMPDIR/bad.json': "* ]]
}

@test "by default, proposals answer and the rest passes on in order" {
	in=$dfix/mixed.ndjson
	decide
	[ "$status" -eq 0 ]
	cmp "$out" "$dfix/mixed.expected.ndjson"
	[ ! -s "$err" ]
	# Answers for d1, d2, d5 and d6; d3 (tool.execute, {}) and d4
	# (llm.execute, no proposal) are passed on.
	assert_eq "$(jq -r '[.type, .decision_id // .id // .code // "-"] | join(" ")' "$out" | tr '\n' ,)" \
	    "decision.response d1,llm.request c9,decision.response d2,decision.request d3,no.such.type -,decision.request d4,error bad_json,decision.response d5,decision.response d6,"
}

@test "lines passed on are the input's bytes, not a re-serialisation" {
	in=$dfix/mixed.ndjson
	decide
	cmp <(sed -n '2p;4,7p' "$in") <(sed -n '2p;4,7p' "$out")
	grep -qF '"n":100000000000000000001,"x":1.50}' "$out"
	grep -qF '"temperature":1.0}' "$out"
}

@test "a proposal answers with its own members after type and ids" {
	req d1 '{"proposed":{"messages":[],"actions":[{"type":"done"}],"state":{"n":1}}}' >"$in"
	decide
	[ "$status" -eq 0 ]
	assert_eq "$(cat "$out")" \
	    '{"type":"decision.response","session_id":"s1","decision_id":"d1","messages":[],"actions":[{"type":"done"}],"state":{"n":1}}'
}

@test "empty, absent and member-less proposals pass on unchanged" {
	{ req d1; req d2 '{"proposed":null}'; req d3 '{"proposed":{"x":1}}'
	  jq -cn '{type:"decision.request",session_id:"s1",decision_id:"d4"}'
	} >"$in"
	decide
	[ "$status" -eq 0 ]
	cmp "$in" "$out"
}

@test "many lines interleave in order" {
	local i
	for i in $(seq 1 50); do
		req "a$i" '{"proposed":{"actions":[]}}'
		req "p$i"
		echo "{\"type\":\"tool.result\",\"id\":\"t$i\",\"result\":$i}"
	done >"$in"
	decide
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$out")" -eq 150 ]
	assert_eq "$(jq -r '.decision_id // .id' "$out" | paste -sd' ' | cut -d' ' -f1-6)" \
	    "a1 p1 t1 a2 p2 t2"
	assert_eq "$(jq -r 'select(.type == "decision.response") | .decision_id' "$out" | wc -l)" 50
	cmp <(grep -v '"a[0-9]*"' "$in") <(grep -v decision.response "$out")
}

@test "unknown types are forwarded, in both modes" {
	printf '%s\n' '{"type":"x.y","z":[1,2]}' '{"type":"decision.requests"}' >"$in"
	decide
	cmp "$in" "$out"
	decide --jq '{actions: []}'
	cmp "$in" "$out"
}

@test "--jq answers with the program's first value" {
	{ req d1; req d2 '{"trigger":{"type":"tool.execute"}}'; } >"$in"
	decide --jq '{actions: [{type: "done", data: .trigger.type}]}'
	[ "$status" -eq 0 ]
	assert_eq "$(cat "$out")" \
'{"type":"decision.response","session_id":"s1","decision_id":"d1","actions":[{"type":"done","data":"session.start"}]}
{"type":"decision.response","session_id":"s1","decision_id":"d2","actions":[{"type":"done","data":"tool.execute"}]}'
	[ ! -s "$err" ]
}

@test "a whole response is kept; a bare one is completed" {
	{ req d1; req d2; } >"$in"
	decide --jq 'if .decision_id == "d1" then
	    {type: "decision.response", session_id, decision_id, state: 1}
	    else {state: 2} end'
	assert_eq "$(jq -c . "$out")" \
'{"type":"decision.response","session_id":"s1","decision_id":"d1","state":1}
{"type":"decision.response","session_id":"s1","decision_id":"d2","state":2}'
}

@test "empty and null pass the request on" {
	{ req d1 '{"proposed":{"actions":[]}}'; req d2 '{"proposed":{"actions":[]}}'; } >"$in"
	decide --jq 'empty'
	cmp "$in" "$out"
	decide --jq 'null'
	cmp "$in" "$out"
	decide --jq 'if .decision_id == "d1" then null else .proposed end'
	assert_eq "$(jq -r '.type' "$out" | paste -sd' ')" \
	    "decision.request decision.response"
}

@test "a jq runtime error is an error line, the request passes on, and the stream goes on" {
	{ req d1 '{"n":5}'; req d2; echo '{"type":"tool.result","id":"t"}'; } >"$in"
	decide --jq 'if .n then .n.x else {} end'
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$out")" -eq 4 ]
	assert_eq "$(sed -n 1p "$out" | jq -c 'del(.input)')" \
	    '{"type":"error","code":"jq_error","message":"decision '\''d1'\'': jq error: Cannot index number with string \"x\"","session_id":"s1"}'
	assert_eq "$(sed -n 1p "$out" | jq -r .input)" "$(sed -n 1p "$in")"
	assert_eq "$(sed -n 2p "$out")" "$(sed -n 1p "$in")"
	assert_eq "$(sed -n 3p "$out" | jq -r .type)" decision.response
	assert_eq "$(sed -n 4p "$out")" "$(sed -n 3p "$in")"
	assert_eq "$(cat "$err")" \
	    "agentrt-decide: <stdin>:1: decision 'd1': jq error: Cannot index number with string \"x\""
}

@test "halt_error and input are error lines; halt passes on" {
	req d1 >"$in"
	decide --jq '"no more\n" | halt_error'
	assert_eq "$(jq -r 'select(.type == "error") | .message' "$out")" \
	    "decision 'd1': halt_error: no more"
	[ "$(wc -l <"$out")" -eq 2 ]
	decide --jq 'input'
	assert_eq "$(head -n 1 "$out" | jq -r .code)" jq_error
	grep -q 'no input to read' "$err"
	decide --jq 'halt'
	cmp "$in" "$out"
}

@test "a value that is not an object or null is a bad_response line" {
	req d1 >"$in"
	decide --jq '"yes"'
	[ "$status" -eq 0 ]
	assert_eq "$(head -n 1 "$out" | jq -c 'del(.input)')" \
	    '{"type":"error","code":"bad_response","message":"decision '\''d1'\'': the program yielded string, not an object or null","session_id":"s1"}'
	assert_eq "$(head -n 1 "$out" | jq -r .input)" "$(cat "$in")"
	assert_eq "$(sed -n 2p "$out")" "$(cat "$in")"
	decide --jq '.'
	assert_eq "$(head -n 1 "$out" | jq -r .code)" bad_response
	decide --jq '{decision_id: "other"}'
	assert_eq "$(head -n 1 "$out" | jq -r .message)" \
	    "decision 'd1': the answer's \"decision_id\" is not the request's"
}

@test "more than one value: the first counts, and stderr says so once" {
	{ req d1; req d2; } >"$in"
	decide --jq '{state: 1}, {state: 2}'
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c .state "$out" | paste -sd' ')" "1 1"
	assert_eq "$(cat "$err")" \
	    "agentrt-decide: <stdin>:1: the program yielded more than one value; only the first counts"
}

@test "a program that does not compile exits 2 with every jq message" {
	req d1 >"$in"
	decide --jq '$nope | nofunc(1)'
	[ "$status" -eq 2 ]
	[ ! -s "$out" ]
	assert_eq "$(cat "$err")" \
"agentrt-decide: jq: error: \$nope is not defined at <top-level>, line 1
agentrt-decide: jq: error: nofunc/1 is not defined at <top-level>, line 1
agentrt-decide: jq: 2 compile errors"
	decide --jq '.a |||'
	[ "$status" -eq 2 ]
	[[ "$(head -n 1 "$err")" == "agentrt-decide: jq: error: syntax error, "* ]]
	decide --jq 'import "m" as m; .'
	[ "$status" -eq 2 ]
	grep -q 'module not found' "$err"
}

@test "--arg, --argjson, --slurpfile and --rawfile set variables and \$ARGS" {
	req d1 >"$in"
	printf '1 "two"\n[3]\n' >"$BATS_TEST_TMPDIR/vals.json"
	printf 'raw\ntext\n' >"$BATS_TEST_TMPDIR/raw.txt"
	decide --arg who me --argjson n '{"k":2}' \
	    --slurpfile vals "$BATS_TEST_TMPDIR/vals.json" \
	    --rawfile raw "$BATS_TEST_TMPDIR/raw.txt" \
	    --jq '{state: [$who, $n, $vals, $raw, $ARGS.named.who]}'
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c .state "$out")" \
	    '["me",{"k":2},[1,"two",[3]],"raw\ntext\n","me"]'
}

@test "options and files may come in any order" {
	req d1 >"$BATS_TEST_TMPDIR/r.ndjson"
	run agentrt-decide "$BATS_TEST_TMPDIR/r.ndjson" --arg x y --jq '{state: $x}'
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c .state <<<"$output")" '"y"'
}

@test "-f reads the program, with comments, from a file" {
	req d1 >"$in"
	printf '# a comment\n{state: $ARGS.named.v} # another\n' >"$BATS_TEST_TMPDIR/p.jq"
	decide -f "$BATS_TEST_TMPDIR/p.jq" --argjson v 3
	assert_eq "$(jq -c .state "$out")" 3
	decide --from-file "$BATS_TEST_TMPDIR/p.jq"
	assert_eq "$(jq -c .state "$out")" null
}

@test "debug writes to stderr; \$ENV is the environment" {
	req d1 >"$in"
	POLICY_NOTE=hello decide --jq '.decision_id | debug | {state: $ENV.POLICY_NOTE}'
	assert_eq "$(cat "$err")" 'agentrt-decide: ["DEBUG:","d1"]'
	assert_eq "$(jq -c .state "$out")" '"hello"'
}

@test "--agent answers only the agents named and passes the rest on" {
	{ req d1 '{"proposed":{"actions":[]}}'
	  req d2 '{"agent_id":"other","proposed":{"actions":[]}}'
	  req d3 '{"agent_id":"math","proposed":{"actions":[]}}'
	  jq -cn '{type:"decision.request",session_id:"s1",decision_id:"d4",proposed:{actions:[]}}'
	} >"$in"
	decide --agent calc --agent math
	assert_eq "$(jq -r '.type + " " + .decision_id' "$out" | paste -sd,)" \
	    "decision.response d1,decision.request d2,decision.response d3,decision.request d4"
	decide --agent other --jq 'error("ran")'
	assert_eq "$(jq -r '.type' "$out" | paste -sd' ')" \
	    "decision.request error decision.request decision.request decision.request"
}

@test "bad lines become error lines and the stream goes on" {
	{ echo 'not json'; req d1 '{"proposed":{"actions":[]}}'
	  echo '{"no":"type"}'; printf '{"type":"a\0b"}\n'; echo '[1,2]'
	  jq -cn '{type: "x", pad: ("x" * 300)}'
	  printf '\377\n'; echo '{"type":"last"}'; } >"$in"
	decide --max-line 300
	[ "$status" -eq 0 ]
	assert_eq "$(jq -r '.code // .type' "$out" | paste -sd' ')" \
	    "bad_json decision.response no_type nul_byte not_object line_too_long bad_utf8 last"
	assert_eq "$(jq -r 'select(.type == "error") | .message' "$out" | cut -d: -f1-2 | paste -sd' ')" \
	    "<stdin>:1 <stdin>:3 <stdin>:4 <stdin>:5 <stdin>:6 <stdin>:7"
	[ "$(wc -l <"$err")" -eq 6 ]
	assert_eq "$(head -n 1 "$err")" \
	    "agentrt-decide: <stdin>:1: not valid JSON: Invalid numeric literal at line 1, column 4"
}

@test "a malformed request's error line quotes its first 256 bytes as input" {
	# agentrt(7), THE BUS: "input holds the first 256 bytes of the
	# offending line", as agentrt-llm's and agentrt-tool's do.
	{ printf '{"type":"decision.request",  "session_id":"s1","pad":"%0300d"}\n' 0
	  req d2 '{"proposed":"yes"}'; } >"$in"
	decide
	[ "$status" -eq 0 ]
	assert_eq "$(jq -r '.code // .type' "$out" | paste -sd' ')" \
	    "bad_request decision.request bad_request decision.request"
	assert_eq "$(sed -n 1p "$out" | jq -r .input)" "$(head -c 256 "$in")"
	assert_eq "$(sed -n 1p "$out" | jq -c keys_unsorted)" \
	    '["type","code","message","input","session_id"]'
	assert_eq "$(sed -n 3p "$out" | jq -r .input)" "$(sed -n 2p "$in")"
	assert_eq "$(sed -n 3p "$out" | jq -r .message)" \
	    "decision 'd2': \"proposed\" is string, not an object"
	[ "$(wc -l <"$err")" -eq 2 ]
}

@test "a type holding a NUL is a bad line, never a decision" {
	{ echo '{"type":"decision.request\u0000x","session_id":"s1","decision_id":"d1","proposed":{"actions":[]}}'
	  req d2 '{"proposed":{"actions":[]}}'; } >"$in"
	decide
	[ "$status" -eq 0 ]
	assert_eq "$(jq -r '.code // .type' "$out" | paste -sd' ')" \
	    "bad_type decision.response"
	assert_eq "$(sed -n 1p "$out" | jq -r .message)" \
	    '<stdin>:1: line'\''s "type" "decision.request\u0000x" holds a NUL byte'
	assert_eq "$(sed -n 1p "$out" | jq -r .input)" "$(sed -n 1p "$in")"
	assert_eq "$(sed -n 2p "$out" | jq -r .decision_id)" d2
	assert_eq "$(cat "$err")" \
	    'agentrt-decide: <stdin>:1: line'\''s "type" "decision.request\u0000x" holds a NUL byte'
	decide --jq '{actions: []}'
	assert_eq "$(jq -r '.code // .type' "$out" | paste -sd' ')" \
	    "bad_type decision.response"
}

@test "a line over --max-line of many megabytes is one error line" {
	{ req d1; head -c 3000000 /dev/zero | tr '\0' x; echo; req d2; } >"$in"
	decide --max-line 1M
	[ "$status" -eq 0 ]
	assert_eq "$(jq -r '.code // .decision_id' "$out" | paste -sd' ')" "d1 line_too_long d2"
	grep -q 'line is longer than 1048576 bytes (3000000)' "$err"
}

@test "files are read in turn, - is stdin, and an unreadable one is named" {
	req f1 '{"proposed":{"state":1}}' >"$BATS_TEST_TMPDIR/a.ndjson"
	req f3 >"$in"
	decide "$BATS_TEST_TMPDIR/a.ndjson" "$BATS_TEST_TMPDIR/none" -
	[ "$status" -eq 1 ]
	assert_eq "$(cat "$err")" "agentrt-decide: read '$BATS_TEST_TMPDIR/none': No such file or directory"
	assert_eq "$(jq -r '.type + " " + .decision_id' "$out" | paste -sd,)" \
	    "decision.response f1,decision.request f3"
	printf 'oops\n' >"$BATS_TEST_TMPDIR/b.ndjson"
	run agentrt-decide "$BATS_TEST_TMPDIR/b.ndjson"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$BATS_TEST_TMPDIR/b.ndjson:1: not valid JSON"* ]]
}

@test "a directory as input is a read error, status 1" {
	run agentrt-decide "$BATS_TEST_TMPDIR"
	[ "$status" -eq 1 ]
	[[ "$output" == "agentrt-decide: read $BATS_TEST_TMPDIR: Is a directory" ]]
}

@test "writing to a full device exits 1 with a message" {
	[ -w /dev/full ] || skip "no /dev/full"
	{ req d1 '{"proposed":{"state":1}}'; req d2; } >"$in"
	local opts
	# An answer, a line passed on, and an error line.
	for opts in "" "--jq empty" "--jq error"; do
		status=0
		agentrt-decide $opts <"$in" >/dev/full 2>"$BATS_TEST_TMPDIR/err" ||
		    status=$?
		[ "$status" -eq 1 ] || fail "$opts: status $status"
		assert_eq "$(tail -n 1 "$BATS_TEST_TMPDIR/err")" \
		    "agentrt-decide: write: No space left on device"
	done
}

@test "an empty input is no output and status 0" {
	: >"$in"
	decide
	[ "$status" -eq 0 ]
	[ ! -s "$out" ]
	[ ! -s "$err" ]
}

# --- examples/policies ---------------------------------------------------

@test "cap-model-calls.jq: up to 8 calls by default, the rest as proposed" {
	in=$dfix/cap-model-calls.ndjson
	decide -f "$policies/cap-model-calls.jq"
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	cmp "$out" "$dfix/cap-model-calls.expected.ndjson"
	# k4 (tool.execute) and the llm.request pass on untouched.
	cmp <(sed -n '4p;7p' "$in") <(sed -n '4p;7p' "$out")
	[ "$(grep -c '"type":"llm.call"' "$out")" -eq 4 ]
}

@test "cap-model-calls.jq --argjson max 2 turns the third call into a done" {
	in=$dfix/cap-model-calls.ndjson
	decide -f "$policies/cap-model-calls.jq" --argjson max 2
	[ "$status" -eq 0 ]
	cmp "$out" "$dfix/cap-model-calls.max2.expected.ndjson"
	assert_eq "$(jq -c 'select(.decision_id == "k3") | .actions' "$out")" \
	    '[{"type":"done","data":{"note":"model call cap reached: 2 of 2"}}]'
	# A new user message starts a new count.
	assert_eq "$(jq -r 'select(.decision_id == "k6") | .actions[0].type' "$out")" llm.call
	# The tool result is still recorded.
	assert_eq "$(jq -r 'select(.decision_id == "k3") | .messages[-1].role' "$out")" tool
}

@test "require-tool.jq nudges a tool-less answer once per turn" {
	in=$dfix/require-tool.ndjson
	decide -f "$policies/require-tool.jq"
	[ "$status" -eq 0 ]
	[ ! -s "$err" ]
	cmp "$out" "$dfix/require-tool.expected.ndjson"
	# r1 and r6 (tools only in an earlier turn) are nudged: the answer is
	# recorded, a user nudge follows, and the model is called again.
	assert_eq "$(jq -r 'select(.actions == [{"type":"llm.call"}]) | .decision_id' "$out" | paste -sd' ')" "r1 r6"
	assert_eq "$(jq -c 'select(.decision_id == "r1") | .messages[-2:] | map(.role)' "$out")" '["assistant","user"]'
	# r2 (a tool result this turn) and r3 (already nudged) end with done.
	assert_eq "$(jq -r 'select(.actions[0].type == "done") | .decision_id' "$out" | paste -sd' ')" "r2 r3"
	cmp <(sed -n 5p "$in") <(sed -n 5p "$out")
}

@test "require-tool.jq --argjson nudges 2 nudges a second time" {
	in=$dfix/require-tool.ndjson
	decide -f "$policies/require-tool.jq" --argjson nudges 2
	[ "$status" -eq 0 ]
	cmp "$out" "$dfix/require-tool.nudges2.expected.ndjson"
	assert_eq "$(jq -r 'select(.actions == [{"type":"llm.call"}]) | .decision_id' "$out" | paste -sd' ')" "r1 r3 r6"
}

@test "the policies compile and pass on requests without a proposal" {
	local p
	req d1 '{"trigger":{"type":"llm.execute"}}' >"$in"
	for p in "$policies"/*.jq; do
		decide -f "$p"
		[ "$status" -eq 0 ] || fail "$p: status $status: $(cat "$err")"
		cmp "$in" "$out"
	done
}

# The EXAMPLES section runs as written, so the manual cannot drift.
@test "the man page's EXAMPLES run and succeed" {
	local script=$BATS_TEST_TMPDIR/examples.sh
	{
		echo 'set -euo pipefail'
		awk '/^\.Sh EXAMPLES/ { on = 1; next } /^\.Sh / { on = 0 }
		    on && /^\.Bd -literal/ { lit = 1; next }
		    on && /^\.Ed/ { lit = 0; next }
		    on && lit { print }' "$man1" |
			sed -e 's/\\e/\\/g' -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g"
	} >"$script"
	[ "$(grep -c agentrt-decide "$script")" -ge 4 ]
	cd "$BATS_TEST_TMPDIR"
	run bash "$script"
	[ "$status" -eq 0 ] || fail "examples failed: $output"
	[ "${#lines[@]}" -eq 4 ]
	assert_eq "${lines[0]}" '{"type":"decision.response","session_id":"s1","decision_id":"d1","agent":{"model":"mock/echo"}}'
	assert_eq "${lines[1]}" "${lines[0]}"
	assert_eq "${lines[2]}" '{"type":"decision.response","session_id":"s1","decision_id":"d1","agent":{"model":"mock/other"}}'
	assert_eq "${lines[3]}" "${lines[0]}"
}

# VmRSS of process PID, in kB.
rss_of() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

@test "bad JSON lines do not grow agentrt-decide" {
	[ -z "${ART_TEST_WRAP:-}" ] || skip "RSS under valgrind is valgrind's"
	[ -r /proc/self/status ] || skip "no /proc"
	local fifo=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/out pid a b i
	mkfifo "$fifo"
	# Under ASan, its quarantine and the stack traces it keeps of each
	# allocation grow too: turn them off (LeakSanitizer still looks).
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0:malloc_context_size=0" \
	    agentrt-decide <"$fifo" >"$out" 2>/dev/null &
	pid=$!
	exec 5>"$fifo"
	yes '{"a""b"}' | head -n 1000 >&5
	wait_lines "$out" 1000
	a=$(rss_of "$pid")
	yes '{"a""b"}' | head -n 200000 >&5
	for i in $(seq 1 1200); do
		[ "$(wc -l <"$out")" -ge 201000 ] && break
		sleep 0.1
	done
	b=$(rss_of "$pid")
	exec 5>&-
	wait "$pid" || fail "agentrt-decide exited $?"
	[ "$(wc -l <"$out")" -eq 201000 ] || fail "$(wc -l <"$out") error lines"
	# libjq 1.6's own leak here was 34 bytes a line: 6.6 MB.
	[ $((b - a)) -lt 2048 ] || fail "VmRSS grew from $a kB to $b kB"
}
