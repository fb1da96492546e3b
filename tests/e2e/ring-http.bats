#!/usr/bin/env bats
# Whole rings whose model is a real HTTP server: openai/ and anthropic/
# models pointed at tests/helpers/llmserver.py's K-step "add" tool loop,
# streaming and not, with a worker-run call in the provider's own format
# and a fallback model.

load lib

setup() {
	start_server
}

teardown() {
	stop_server
}

# http_ring AGENT K: the ring on agent AGENT, both providers at loop/K.
http_ring() {
	OPENAI_BASE_URL="$srv/loop/$2/v1" ANTHROPIC_BASE_URL="$srv/loop/$2" \
	OPENAI_API_KEY=sk-ring-test-key-000111222333 \
	    ring -a "$1" -m 'add it up'
}

# The loop's trace: each tool result, then the final text.
check_loop() {
	assert_eq "$(events 'select(.type=="tool_result") | .result' | tr '\n' ' ')" \
	    '"1" "2" "3" '
	assert_eq "$(events 'select(.type=="completion") | .text')" \
	    '"done after 3 steps"'
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" \
	    completed
	# K tool rounds and the last answer: K+1 model calls.
	assert_eq "$(wc -l <"$srv_log")" 4
}

@test "openai: a tool loop over Chat Completions, not streamed" {
	http_ring http-openai 3
	[ "$status" -eq 0 ] || fail "$output"
	check_loop
	# The model saw its own tool calls and the results, in its format.
	assert_eq "$(tail -1 "$srv_log" | jq -c '[.body.messages[] | .role]')" \
	    '["system","user","assistant","tool","assistant","tool","assistant","tool"]'
	assert_eq "$(tail -1 "$srv_log" | jq -c '.body.tools[0] |
	    [.type, .function.name, .function.parameters.required]')" \
	    '["function","add",["a","b"]]'
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.completed") |
	    .response.model] | unique')" '["openai/mock-model"]'
	# The key went out with each request, and nowhere else.
	assert_eq "$(jq -r .headers.authorization "$srv_log" | sort -u)" \
	    'Bearer sk-ring-test-key-000111222333'
	! grep -rq sk-ring-test-key "$AGENTRT_DB" "$EVENTS" \
	    "$BATS_TEST_TMPDIR/stages.err" || false
}

@test "openai: the same loop streamed: deltas reach the client, results match" {
	http_ring http-openai-stream 3
	[ "$status" -eq 0 ] || fail "$output"
	check_loop
	assert_eq "$(jq -c '.body.stream' "$srv_log" | sort -u)" true
	events 'select(.type=="token") | .text' | grep -q .
	assert_eq "$(events 'select(.type=="token") | .text // empty' | jq -j . )" \
	    'done after 3 steps'
}

@test "anthropic: a streamed tool loop over the Messages API" {
	http_ring http-anthropic 3
	[ "$status" -eq 0 ] || fail "$output"
	check_loop
	assert_eq "$(tail -1 "$srv_log" | jq -c '[.path, .body.system,
	    (.body.messages | map(.role))]')" \
	    '["/loop/3/v1/messages","Add with the add tool.",["user","assistant","user","assistant","user","assistant","user"]]'
	assert_eq "$(tail -1 "$srv_log" | jq -c '[.body.messages[-1].content[] | .type]')" \
	    '["tool_result"]'
}

@test "a worker-run call with format openai goes out and back in the provider's body" {
	http_ring http-worker 2
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" \
	    '"done after 2 steps"'
	# The decision carried a Chat Completions body, without "stream".
	assert_eq "$(log_of '[.[].payload | select(.type=="decision.queued") |
	    .trigger | select(.type=="llm.execute")][0] |
	    [.format, (.request.messages | map(.role)), (.request | has("stream")),
	    .request.model, .request.tools[0].type]')" \
	    '["openai",["system","user"],false,"mock-model","function"]'
}

@test "a model that fails falls back to the next in the agent's chain" {
	OPENAI_BASE_URL="$srv/status/500/v1" ANTHROPIC_BASE_URL="$srv/loop/1" \
	    ring -a http-fallback -m 'add it up'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" \
	    '"done after 1 steps"'
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.completed") |
	    .response.model] | unique')" '["anthropic/mock-model"]'
}

# ms TIMESTAMP: RFC 3339 with milliseconds, as epoch milliseconds.
ms_of='def ms: capture("^(?<s>[^.]*)(\\.(?<f>[0-9]{3}))?Z$") |
    ((.s + "Z" | fromdate) * 1000 + ((.f // "0") | tonumber));'

@test "a 429's Retry-After holds the engine's retry back at least that long" {
	OPENAI_BASE_URL="$srv/fixture/openai/error-429-rate-limit.http/v1" \
	    ring -a http-retry -m 'add it up'
	# One retry, then the call fails for good and the turn pauses.
	assert_eq "$(log_of '[.[] | select(.payload.type=="llm.call.errored") |
	    .payload | [.attempt, .code, .retryable]]')" \
	    '[[1,"rate_limited",true],[2,"rate_limited",true]]'
	# The agent's backoff is 0 s; the server asked for 2 s, and got it:
	# the retry is due 2 s on (give or take the millisecond between the
	# engine's clock reading and the event's stamp), and not sent before.
	wait=$(agentrt-session log "$(the_session)" | jq -s -c "$ms_of"'
	    map(select(.payload.type=="llm.call.errored"))[0] as $e |
	    map(select(.payload.type=="llm.call.dispatched"))[1] as $d |
	    ($e.payload.next_at | ms) - ($e.occurred_at | ms) |
	    [. >= 1990 and . <= 2100, ($d.occurred_at | ms) >=
	    ($e.payload.next_at | ms)]')
	assert_eq "$wait" '[true,true]'
	assert_eq "$(wc -l <"$srv_log")" 2
}

@test "an agent that writes a credential into a provider header is refused" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	jq '.providers = {openai: {headers: {Authorization: "Bearer sk-live-123"}}}' \
	    "$top_srcdir/tests/fixtures/agents/http-openai.json" \
	    >"$BATS_TEST_TMPDIR/agents/leaky.json"
	AGENTS="$BATS_TEST_TMPDIR/agents" ring -a leaky -m hi
	[ "$status" -ne 0 ]
	[[ "$output" == *"providers.openai.headers.Authorization: a credential must come from the environment"* ]]
	! grep -rq sk-live-123 "$AGENTRT_DB" "$EVENTS" 2>/dev/null || false
	# Through the environment it is fine, and the value stays out of the store.
	jq '.providers = {openai: {headers: {Authorization: "Bearer ${RING_KEY}"}}}' \
	    "$top_srcdir/tests/fixtures/agents/http-openai.json" \
	    >"$BATS_TEST_TMPDIR/agents/envkey.json"
	RING_KEY=sk-live-456 OPENAI_BASE_URL="$srv/loop/1/v1" \
	    AGENTS="$BATS_TEST_TMPDIR/agents" ring -a envkey -m hi
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -r '.headers.authorization' "$srv_log" | sort -u)" \
	    'Bearer sk-live-456'
	! grep -rq sk-live-456 "$AGENTRT_DB" "$EVENTS" || false
	jq '.providers = {openai: {format: "grpc"}}' \
	    "$top_srcdir/tests/fixtures/agents/http-openai.json" \
	    >"$BATS_TEST_TMPDIR/agents/badformat.json"
	AGENTS="$BATS_TEST_TMPDIR/agents" ring -a badformat -m hi
	[[ "$output" == *"providers.openai: format 'grpc' is not openai or anthropic"* ]]
	jq '.fallback = "openai/x"' \
	    "$top_srcdir/tests/fixtures/agents/http-openai.json" \
	    >"$BATS_TEST_TMPDIR/agents/badfallback.json"
	AGENTS="$BATS_TEST_TMPDIR/agents" ring -a badfallback -m hi
	[[ "$output" == *"field 'fallback': expected an array of provider/name models"* ]]
}

@test "a providers field or header of the wrong shape is a bad agent, named" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	jq '.providers = ["openai"]' \
	    "$top_srcdir/tests/fixtures/agents/http-openai.json" \
	    >"$BATS_TEST_TMPDIR/agents/badproviders.json"
	AGENTS="$BATS_TEST_TMPDIR/agents" ring -a badproviders -m hi
	[ "$status" -ne 0 ]
	[[ "$output" == *"field 'providers': expected an object of provider blocks"* ]]
	jq '.providers = {local: {format: "openai", headers: {"X-N": 5}}}' \
	    "$top_srcdir/tests/fixtures/agents/http-openai.json" \
	    >"$BATS_TEST_TMPDIR/agents/badheader.json"
	AGENTS="$BATS_TEST_TMPDIR/agents" ring -a badheader -m hi
	[ "$status" -ne 0 ]
	[[ "$output" == *"providers.local.headers.X-N: expected a string"* ]]
}

# Each OpenAI body is built from the one before (lib/remote.c, body_text)
# and must be what building it whole gave: the bodies of a 25-step loop,
# plain and streamed, on a frozen clock, are those agentrt sent at commit
# 4ed298d, before it built them so (tests/fixtures/openai/loop25-*).
@test "openai: a long loop's bodies, built from the one before, are the whole ones" {
	export AGENTRT_CLOCK=2026-01-01T00:00:00Z AGENTRT_ID_SEED=25
	for agent in http-openai http-openai-stream; do
		: >"$srv_log"
		AGENTRT_DB="$BATS_TEST_TMPDIR/db-$agent" http_ring "$agent" 25
		[ "$status" -eq 0 ] || fail "$output"
		assert_eq "$(wc -l <"$srv_log")" 26
		diff <(jq -cS .body "$fixtures/openai/loop25-$agent.ndjson") \
		    <(jq -cS .body "$srv_log") || fail "$agent: the bodies differ"
	done
}
