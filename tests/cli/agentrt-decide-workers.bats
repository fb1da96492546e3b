#!/usr/bin/env bats
# agentrt-decide --exec and --url: decisions answered by a worker process
# or an HTTP worker, and what becomes of a worker that fails

load lib

# req DECISION_ID [JSON members to add]: one decision.request line.
req() {
	jq -cn --arg d "$1" --argjson more "${2:-{\}}" \
	    '{type: "decision.request", session_id: "s1", decision_id: $d,
	      agent_id: "calc", attempts: 1,
	      trigger: {type: "llm.execute", id: "call-1"},
	      proposed: {}} + $more'
}

# An RFC 3339 time SECS (a decimal) from now.
soon() {
	python3 -c 'import datetime, sys
t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=float(sys.argv[1]))
print(t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000))' "$1"
}

# Runs agentrt-decide with the arguments given, stdin from $in, keeping
# stdout in $out and stderr in $err; $status is its exit status.
decide() {
	out=$BATS_TEST_TMPDIR/out err=$BATS_TEST_TMPDIR/err
	status=0
	timeout 60 agentrt-decide "$@" <"$in" >"$out" 2>"$err" || status=$?
}

# line N [FILTER]: the Nth output line (from 1), through a jq filter.
line() {
	sed -n "${1}p" "$out" | jq -c "${2:-.}"
}

setup() {
	in=$BATS_TEST_TMPDIR/in
	T=$BATS_TEST_TMPDIR
	export T
}

teardown() {
	stop_server
}

# A worker in jq: answers llm.execute requests with "done" and a state
# naming the decision, null for anything else; logs what it was sent.
JQW='tee -a "$T/sent" | jq -c --unbuffered "if .trigger.type == \"llm.execute\" then {actions: [{type: \"done\"}], state: {seen: .decision_id}} else null end"'

@test "--exec: a bad AGENTRT_CLOCK for the worker is a usage error, named" {
	AGENTRT_CLOCK=soon run agentrt-decide --exec cat </dev/null
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-decide: bad AGENTRT_CLOCK: "* ]] || fail "$output"
}

@test "--exec: a bare answer is completed, null passes on, other lines pass unchanged" {
	{ req d1; echo '{"type":"noise","n":1.0}'; req d2 '{"trigger":{"type":"tool.execute","id":"t1"}}'; } >"$in"
	decide --exec "$JQW"
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(line 1)" '{"type":"decision.response","session_id":"s1","decision_id":"d1","actions":[{"type":"done"}],"state":{"seen":"d1"}}'
	# Passed on byte for byte: 1.0 is not re-written as 1.
	assert_eq "$(sed -n 2p "$out")" '{"type":"noise","n":1.0}'
	assert_eq "$(line 3 .decision_id)" '"d2"'
	assert_eq "$(line 3 .type)" '"decision.request"'
	assert_eq "$(wc -l <"$out")" 3
	# The worker saw the two requests, as they came, and not the noise.
	assert_eq "$(jq -c .decision_id "$T/sent" | tr '\n' ' ')" '"d1" "d2" '
	assert_eq "$(head -1 "$T/sent")" "$(head -1 "$in")"
}

@test "--exec: a worker's decision.error goes to the engine as it said" {
	req d1 >"$in"
	decide --exec 'read -r l; echo "{\"type\":\"decision.error\",\"error\":\"no budget\",\"code\":\"quota\",\"retryable\":true}"; read -r l'
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(line 1 '[.type, .decision_id, .attempt, .retryable, .code]')" '["decision.error","d1",1,true,"quota"]'
	assert_eq "$(line 1 .error)" '"worker: no budget"'
	# The worker said it: nothing failed, nothing to say on stderr.
	assert_eq "$(cat "$err")" ""
}

@test "--exec: a worker that dies is started again; its request gets a retryable error" {
	{ req d1; req d2; } >"$in"
	decide --exec 'if [ -e "$T/once" ]; then '"$JQW"'; else touch "$T/once"; read -r l; exit 7; fi'
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(line 1 '[.type, .decision_id, .retryable]')" '["decision.error","d1",true]'
	[[ "$(line 1 .error)" == *"exited with status 7 before answering"* ]]
	assert_eq "$(cat "$err")" "agentrt-decide: <stdin>:1: decision 'd1': $(sed -n 1p "$out" | jq -r .error) (retryable)"
	# The second request went to a new worker, which answered it.
	assert_eq "$(line 2 '[.type, .decision_id]')" '["decision.response","d2"]'
	assert_eq "$(wc -l <"$out")" 2
}

@test "--exec: a worker that exits after each answer is simply started again" {
	{ req d1; req d2; req d3; } >"$in"
	decide --exec 'read -r l; echo "{\"state\":$$}"'
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(jq -sc 'map(.type) | unique' "$out")" '["decision.response"]'
	# Three processes, one per request.
	assert_eq "$(jq -s 'map(.state) | unique | length' "$out")" 3
}

@test "--exec: a worker that hangs past the deadline is stopped, then replaced" {
	{ req d1 "{\"deadline\":\"$(soon 0.5)\"}"; req d2; } >"$in"
	decide --exec 'if [ -e "$T/once" ]; then '"$JQW"'; else touch "$T/once"; echo $$ >"$T/pid"; sleep 30; fi'
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(line 1 '[.type, .decision_id, .retryable]')" '["decision.error","d1",true]'
	[[ "$(line 1 .error)" == *"did not answer before the decision's deadline"* ]]
	assert_eq "$(line 2 '[.type, .decision_id]')" '["decision.response","d2"]'
	# The hung worker is gone, not left behind.
	run kill -0 "$(cat "$T/pid")"
	[ "$status" -ne 0 ]
}

@test "--exec: an answer that is not JSON, or names another decision, fails it for good" {
	{ req d1; req d2; req d3; } >"$in"
	decide --exec 'read -r l; echo "<html>"; read -r l; echo "{\"decision_id\":\"zz\"}"; read -r l; echo 42'
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(jq -sc 'map([.type, .decision_id, .retryable])' "$out")" \
	    '[["decision.error","d1",false],["decision.error","d2",false],["decision.error","d3",false]]'
	[[ "$(line 1 .error)" == *"not JSON"*"<html>"* ]]
	[[ "$(line 2 .error)" == *"decision_id"*"is not the request's"* ]]
	[[ "$(line 3 .error)" == *"answered number, not an object or null"* ]]
	# Each is said on stderr too, one line each.
	assert_eq "$(grep -c "bad\|not JSON\|not the request's\|not an object" "$err")" 3
}

@test "--agent: a worker is asked only about its agents" {
	{ req d1; req d2 '{"agent_id":"other"}'; } >"$in"
	decide --exec "$JQW" --agent calc
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(line 1 .type)" '"decision.response"'
	assert_eq "$(line 2 '[.type, .agent_id]')" '["decision.request","other"]'
	assert_eq "$(wc -l <"$T/sent")" 1
}

@test "--url: POSTs the request line with the headers; a JSON answer is completed" {
	start_server
	req d1 >"$in"
	decide --url "$srv/fixture/workers/answer.json"
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(line 1)" '{"type":"decision.response","session_id":"s1","decision_id":"d1","actions":[{"type":"done"}],"state":{"by":"http"}}'
	assert_eq "$(jq -c '[.method, .headers["content-type"], .headers.accept, .headers["x-agentrt-signature"]]' "$srv_log")" \
	    '["POST","application/json","text/event-stream, application/json",null]'
	assert_eq "$(jq -c .body "$srv_log")" "$(jq -c . "$in")"
}

@test "--url: one kept-alive connection carries every request" {
	start_server
	{ req d1; req d2; req d3; } >"$in"
	decide --url "$srv/fixture/workers/answer.json"
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(jq -sc 'map(.type)' "$out")" '["decision.response","decision.response","decision.response"]'
	assert_eq "$(jq -s 'map(.peer) | [length, (unique | length)]' -c "$srv_log")" '[3,1]'
}

@test "--url --signing-secret-env: the body's HMAC-SHA256, and the secret nowhere" {
	start_server
	req d1 >"$in"
	AGENTRT_SIGNING_SECRET=sentinel-s3cret decide --url "$srv/fixture/workers/answer.json" \
	    --signing-secret-env AGENTRT_SIGNING_SECRET
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	want=$(python3 -c 'import hmac, hashlib, sys
print("sha256=" + hmac.new(b"sentinel-s3cret", open(sys.argv[1], "rb").read().rstrip(b"\n"), hashlib.sha256).hexdigest())' "$in")
	assert_eq "$(jq -r '.headers["x-agentrt-signature"]' "$srv_log")" "$want"
	run grep -l sentinel-s3cret "$out" "$err"
	[ "$status" -eq 1 ]
	# A variable that is not set is a usage error, before anything runs.
	run env -u NOPE agentrt-decide --url "$srv/x" --signing-secret-env NOPE <"$in"
	[ "$status" -eq 2 ]
	[[ "$output" == *'--signing-secret-env: $NOPE is not set or is empty'* ]]
}

@test "--url: an event stream's deltas go on the bus before its answer" {
	start_server
	req d1 >"$in"
	decide --url "$srv/fixture/workers/stream.sse"
	[ "$status" -eq 0 ] || fail "$(cat "$err")"
	assert_eq "$(jq -sc 'map(.type)' "$out")" '["llm.token.delta","llm.token.delta","decision.response"]'
	assert_eq "$(line 1)" '{"type":"llm.token.delta","session_id":"s1","id":"call-1","delta":{"text":"thin"}}'
	assert_eq "$(line 3 .state)" '{"by":"sse"}'
}

@test "--url: decision.error frames, retryable unless they say not" {
	start_server
	{ req d1; req d2; } >"$in"
	decide --url "$srv/fixture/workers/error.sse"
	assert_eq "$(jq -sc 'map(select(.type == "decision.error") | .retryable)' "$out")" '[true,true]'
	[[ "$(jq -r 'select(.type == "decision.error") | .error' "$out" | head -1)" == *"the model is down"* ]]
	req d3 >"$in"
	decide --url "$srv/fixture/workers/fatal.sse"
	assert_eq "$(line 1 '[.type, .retryable, .error]')" \
	    "[\"decision.error\",false,\"worker $srv/fixture/workers/fatal.sse: bad policy\"]"
	# A stream that ends without its answer may be asked again.
	decide --url "$srv/fixture/workers/cut.sse"
	assert_eq "$(line 2 '[.type, .retryable]')" '["decision.error",true]'
	[[ "$(line 2 .error)" == *"ended without decision.result"* ]]
}

@test "--url: 5xx and no connection are retryable, 4xx and garbage are not" {
	start_server
	req d1 >"$in"
	decide --url "$srv/status/503"
	assert_eq "$(line 1 '[.type, .retryable]')" '["decision.error",true]'
	[[ "$(line 1 .error)" == *"answered HTTP 503: "*"scripted 503"* ]]
	decide --url "$srv/status/400"
	assert_eq "$(line 1 '[.type, .retryable]')" '["decision.error",false]'
	decide --url "$srv/garbage"
	assert_eq "$(line 1 '[.type, .retryable]')" '["decision.error",false]'
	[[ "$(line 1 .error)" == *"not JSON"* ]]
	# A port nothing listens on: the server's, once it is gone.
	stop_server
	decide --url "$srv/fixture/workers/answer.json"
	assert_eq "$(line 1 '[.type, .retryable]')" '["decision.error",true]'
	[ "$status" -eq 0 ]
}

@test "--url: a worker slower than the deadline is a retryable error" {
	start_server
	req d1 "{\"deadline\":\"$(soon 0.4)\"}" >"$in"
	decide --url "$srv/stall/3000/fixture/workers/answer.json"
	assert_eq "$(line 1 '[.type, .retryable]')" '["decision.error",true]'
	[[ "$(line 1 .error)" == *"no answer before the decision's deadline"* ]]
}

@test "worker usage errors exit 2 and say why" {
	req d1 >"$in"
	run agentrt-decide --exec cat --jq . <"$in"
	[ "$status" -eq 2 ]
	[[ "$output" == *"give one of --jq, -f, --exec and --url"* ]]
	run agentrt-decide --exec cat --url http://x/ <"$in"
	[ "$status" -eq 2 ]
	run agentrt-decide --signing-secret-env HOME <"$in"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--signing-secret-env signs --url's requests"* ]]
	run agentrt-decide --url ftp://x/ <"$in"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--url 'ftp://x/': not an http:// or https:// URL"* ]]
	run agentrt-decide --exec '  ' <"$in"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--exec: the command is empty"* ]]
}
