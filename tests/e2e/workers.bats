#!/usr/bin/env bats
# The example decision workers on real rings: examples/workers/toolloop.sh
# behind agentrt-decide --exec, and http_worker.py and http_worker.js
# behind agentrt-decide --url, each driving the calc agent to 17*23 = 391.

load lib

WORKERS="$top_srcdir/examples/workers"
SIGNING_SECRET="correct horse battery staple"

setup() {
	worker_pids=()
}

teardown() {
	local pid
	for pid in "${worker_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# start_worker NAME COMMAND...: runs an HTTP worker on port 0 with its
# stderr in $BATS_TEST_TMPDIR/NAME.err, waits for its "listening on PORT"
# and sets $url to http://127.0.0.1:PORT/.  teardown kills it.
start_worker() {
	local name=$1 err="$BATS_TEST_TMPDIR/$1.err" i port=
	shift
	: >"$err"	# before sed reads it: the job opens it when it runs
	"$@" --port 0 2>"$err" >/dev/null 3>&- &
	worker_pids+=($!)
	for i in $(seq 1 200); do
		port=$(sed -n 's/^listening on \([0-9][0-9]*\)$/\1/p' "$err")
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || fail "worker $name did not start: $(cat "$err")"
	url="http://127.0.0.1:$port/"
}

need_python() { command -v python3 >/dev/null || skip "no python3"; }
need_node() { command -v node >/dev/null || skip "no node"; }

# exec_ring DECIDE-STAGES RUN-ARGS...: ring's pipeline with DECIDE-STAGES,
# a shell command line ("agentrt-decide --exec '...'", perhaps with a
# second stage piped after it), in agentrt-decide's place.
exec_ring() {
	local fifo="$BATS_TEST_TMPDIR/ring"

	rm -f "$fifo"
	mkfifo "$fifo"
	run timeout 60 bash -c '
		fifo=$1 stages=$2; shift 2
		eval "$stages" <"$fifo" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-llm 2>>"$BATS_TEST_TMPDIR/stages.err" |
		agentrt-tool --tools "$top_srcdir/tests/fixtures/tools" \
		    --tools "$top_srcdir/examples/tools" 2>>"$BATS_TEST_TMPDIR/stages.err" |
		AGENTRT_AGENTS="$AGENTS" agentrt-session run --events "$EVENTS" "$@" >"$fifo"
	' exec_ring "$fifo" "$1" "${@:2}"
}

toolloop() {
	printf 'agentrt-decide --exec "bash %s %s"' "$WORKERS/toolloop.sh" "${1:-}"
}

# The calc turn went as the golden trace says, to the tool's answer, and
# the state the worker keeps shows it made both model calls.
check_calc() {
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	assert_eq "$(events 'select(.type=="tool_result") | [.name, .result]')" '["calc","391"]'
	assert_eq "$(log_of '[.[].payload.type | select(test("^(turn|message|llm.call|tool.call)"))] | join(" ")')" \
		"turn.started message.new llm.call.requested llm.call.dispatched llm.call.completed message.new tool.call.requested tool.call.dispatched tool.call.completed message.new llm.call.requested llm.call.dispatched llm.call.completed message.new turn.completed"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.turn_status, .state]')" \
		'["completed",{"model_calls":2}]'
	# Every decision was answered, none failed: session.start,
	# client.messages, llm.finished, tool.execute, tool.finished,
	# llm.finished.
	assert_eq "$(log_of '[.[].payload.type | select(startswith("decision."))] | group_by(.) | map("\(.[0]):\(length)") | join(" ")')" \
		"decision.completed:6 decision.dispatched:6 decision.queued:6"
	# The prompts are the worker's: the system prompt, then the path.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested") | .request.messages | map(.role) | join(",")] | join(" ")')" \
		"system,user system,user,assistant,tool"
}

# --- the bash worker on its own -----------------------------------------

# ask TRIGGER-JSON [STATE-JSON]: one request through toolloop.sh (cap 2).
ask() {
	jq -nc --argjson t "$1" --argjson s "${2:-null}" '{type: "decision.request",
	    session_id: "s1", decision_id: "d1", agent_id: "calc", trigger: $t,
	    proposed: {}, state: $s, pending_calls: 0, calls: [], attempts: 1,
	    agent: {model: "mock/script", system: "Be brief."},
	    messages: [{id: "u1", role: "user", content: "hi"}]}' |
	    bash "$WORKERS/toolloop.sh" 2
}

@test "toolloop.sh: one line a request; executes pass on; the cap becomes a done" {
	assert_eq "$(ask '{"type":"tool.execute","id":"c1","name":"calc","arguments":"{}"}')" null
	assert_eq "$(ask '{"type":"llm.execute","id":"l1","request":{},"stream":false}')" null
	assert_eq "$(ask '{"type":"client.messages","messages":[{"role":"user","content":"hi"}],"new_from":0}' |
	    jq -c '[.state, .actions[0].type, (.actions[0].messages | map(.role))]')" \
	    '[{"model_calls":1},"llm.call",["system","user"]]'
	assert_eq "$(ask '{"type":"tool.finished","id":"c1","ok":true,"name":"calc","result":"4"}' '{"model_calls":2}' |
	    jq -c '[.actions, (.messages | map(.role))]')" \
	    '[[{"type":"done","data":"toolloop: stopped after 2 model calls"}],["user","tool"]]'
	# A request it cannot read is a decision error, and it goes on.
	printf '%s\n' '{"type":"decision.request","trigger":{"type":"llm.finished","ok":true,"message":7}}' \
	    '{"type":"decision.request","trigger":{"type":"tool.execute"}}' >"$BATS_TEST_TMPDIR/two"
	assert_eq "$(bash "$WORKERS/toolloop.sh" <"$BATS_TEST_TMPDIR/two" | jq -c '[.type, .retryable]')" \
	    $'["decision.error",false]\n[null,null]'
}

# --- the bash worker in a ring ------------------------------------------

@test "toolloop.sh behind --exec drives the calc agent to 17*23 = 391" {
	exec_ring "$(toolloop)" -a calc -m 'What is 17*23?'
	check_calc
}

@test "toolloop.sh stops the turn after N model calls, keeping count in state" {
	exec_ring "$(toolloop 2)" -a loop -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"toolloop: stopped after 2 model calls"'
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 2
	assert_eq "$(log_of '[.[].payload | select(.type=="tool.call.completed") | .result] | join(" ")')" "2 4"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.turn_status, .state]')" \
		'["completed",{"model_calls":2}]'
	# Without the cap, the loop runs its four model calls to the end.
	exec_ring "$(toolloop)" -a loop -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text' | tail -1)" '"three steps: 6"'
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c .state)" '{"model_calls":4}'
}

@test "--agent mixes workers: toolloop.sh serves calc, a plain stage its parent" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	cat >"$BATS_TEST_TMPDIR/agents/chief.json" <<-'EOF'
	{"model": "mock/script", "sub_agents": ["calc"],
	 "mock": {"script": [
	   {"tool_calls": [{"name": "calc", "arguments": {"message": "What is 17*23?"}}]},
	   {"content": "chief heard: {{tool}}"}]}}
	EOF
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS"
	exec_ring "$(toolloop) --agent calc | agentrt-decide" -a chief -m go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session ls | jq -s -c 'map(.agent_id) | sort')" '["calc","chief"]'
	chief=$(agentrt-session ls | jq -r 'select(.agent_id=="chief") | .id')
	calc=$(agentrt-session ls | jq -r 'select(.agent_id=="calc") | .id')
	assert_eq "$(events "select(.type==\"completion\" and .session_id==\"$chief\") | .text")" \
		'"chief heard: 17*23 = 391"'
	# Only the worker writes state: calc's decisions were its, chief's
	# were the plain stage's proposals.
	assert_eq "$(agentrt-session show "$calc" | jq -c '[.turn_status, .state]')" '["completed",{"model_calls":2}]'
	assert_eq "$(agentrt-session show "$chief" | jq -c '[.turn_status, .state]')" '["completed",null]'
	assert_eq "$(agentrt-session log "$calc" | jq -s -c '[.[].payload | select(.type=="tool.call.completed") | .result]')" '["391"]'
}

# --- the Python worker --------------------------------------------------

@test "http_worker.py answers signed requests: calc reaches 17*23 = 391" {
	need_python
	export AGENTRT_SIGNING_SECRET="$SIGNING_SECRET"
	start_worker py python3 "$WORKERS/http_worker.py" --secret-env AGENTRT_SIGNING_SECRET
	DECIDE="--url $url --signing-secret-env AGENTRT_SIGNING_SECRET"
	ring -a calc -m 'What is 17*23?'
	check_calc
	# Six decisions, six signed POSTs it took.
	assert_eq "$(grep -c '"POST / HTTP/1.1" 200' "$BATS_TEST_TMPDIR/py.err")" 6
}

@test "http_worker.py checks the signature itself: 401 unless it matches" {
	need_python
	export AGENTRT_SIGNING_SECRET="$SIGNING_SECRET"
	start_worker py python3 "$WORKERS/http_worker.py" --secret-env AGENTRT_SIGNING_SECRET
	body='{"type":"decision.request","session_id":"s","decision_id":"d","trigger":{"type":"tool.execute"}}'
	sig=$(python3 -c 'import hmac, sys; print(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), "sha256").hexdigest())' "$SIGNING_SECRET" "$body")
	post() { curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code} %{content_type}' -d "$body" "$@" "$url"; }
	assert_eq "$(post -H "X-Agentrt-Signature: sha256=$sig")" "200 application/json"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/body")" null
	assert_eq "$(post)" "401 application/json"
	assert_eq "$(post -H "X-Agentrt-Signature: sha256=${sig%?}0")" "401 application/json"
	assert_eq "$(post -H "X-Agentrt-Signature: $sig")" "401 application/json"
}

@test "http_worker.py with another secret refuses the ring's requests: the turn fails" {
	need_python
	export AGENTRT_SIGNING_SECRET="$SIGNING_SECRET" WORKER_SECRET="not the same secret"
	start_worker py python3 "$WORKERS/http_worker.py" --secret-env WORKER_SECRET
	DECIDE="--url $url --signing-secret-env AGENTRT_SIGNING_SECRET"
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	# The first decision's 401 is recorded, not retried, and ends the turn.
	assert_eq "$(log_of '[.[].payload | select(.type=="decision.errored") | .retryable]')" '[false]'
	err=$(log_of '.[].payload | select(.type=="decision.errored") | .error')
	[[ $err == *"HTTP 401"*"bad or missing X-Agentrt-Signature"* ]] || fail "error: $err"
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.turn_status, .state]')" '["failed",null]'
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 0
	assert_eq "$(grep -c '"POST / HTTP/1.1" 401' "$BATS_TEST_TMPDIR/py.err")" 1
}

# --- the Node worker ----------------------------------------------------

@test "http_worker.js streams the answer: token events, then the decision" {
	need_node
	start_worker js node "$WORKERS/http_worker.js"
	DECIDE="--url $url"
	ring -a calc -m 'What is 17*23?'
	check_calc
	# The text it recorded, streamed first, word by word.
	assert_eq "$(events 'select(.type=="token") | .text' | jq -s -c .)" '["17*23 ","= ","391"]'
	assert_eq "$(jq -r -s '[.[] | select(.type=="token")] | map(.session_id) | unique | length' "$EVENTS")" 1
	# Tokens are live only: nothing of them is in the log.
	assert_eq "$(log_of '[.[].payload.type | select(test("token"))] | length')" 0
}

@test "http_worker.js: a decision.error frame is recorded and the decision redelivered" {
	need_node
	start_worker js node "$WORKERS/http_worker.js" --flaky 2
	DECIDE="--url $url"
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	# The worker's message, after agentrt-decide's "worker URL: ".
	assert_eq "$(log_of '[.[].payload | select(.type=="decision.errored") |
	    [.retryable, (.error | endswith("http_worker.js: flaky: failing on purpose (--flaky)"))]] | unique')" \
		'[[true,true]]'
	assert_eq "$(log_of '[.[].payload | select(.type=="decision.errored")] | length')" 2
	assert_eq "$(events 'select(.type=="completion") | .text')" '"17*23 = 391"'
	assert_eq "$(agentrt-session show "$(the_session)" | jq -c .state)" '{"model_calls":2}'
}
