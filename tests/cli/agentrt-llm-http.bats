#!/usr/bin/env bats
# agentrt-llm over real HTTP: openai/ and anthropic/ models against a
# local server (tests/helpers/llmserver.py) serving the recorded provider
# fixtures and scripted faults; streaming, errors and their retry hints,
# deadlines, concurrency, fallback, provider blocks, cassettes, and that
# the API key never leaves the request's headers.

load lib

setup() {
	start_server
	key=sk-test-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c
}

teardown() {
	stop_server
}

hi='[{"role":"user","content":"hi"}]'

# req ID MODEL [JQ]: an llm.request for session s1, attempt 1.
req() {
	jq -nc --arg id "$1" --arg model "$2" --argjson m "$hi" \
	    "{type: \"llm.request\", session_id: \"s1\", id: \$id, attempt: 1,
	      request: {model: \$model, messages: \$m}} | ${3:-.}"
}

# llm SCENARIO [ARGS...]: agentrt-llm with both providers' base URLs at
# $srv/SCENARIO/v1 (anthropic appends /v1/messages to its own base), on
# the file in; out, err, rc as in agentrt-llm.bats.
llm() {
	local sc=$1
	shift
	rc=0
	OPENAI_BASE_URL="$srv/$sc/v1" ANTHROPIC_BASE_URL="$srv/$sc" \
	    agentrt-llm "$@" <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" \
	    2>"$BATS_TEST_TMPDIR/err" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	err=$BATS_TEST_TMPDIR/err
}

input() {
	cat >"$BATS_TEST_TMPDIR/in"
}

# last [JQ-ARGS...]: the settle line (the last line of out) through jq,
# compact.
last() {
	tail -1 "$out" | jq -c "${@:-.}"
}

# --- openai: answers ----------------------------------------------------

@test "openai: a plain reply becomes an LlmResponse with normalised usage" {
	req r1 openai/gpt-4.1-nano | input
	OPENAI_API_KEY=$key llm fixture/openai/chat-nonstream-text.json
	[ "$rc" -eq 0 ]
	[ "$(wc -l <"$out")" -eq 1 ]
	assert_eq "$(last '[.type, .session_id, .id, .attempt]')" \
	    '["llm.result","s1","r1",1]'
	assert_eq "$(last '.response | [.model, .finish_reason, (.content |
	    startswith("**Holiday Name:** Galaxy Day")), .tool_calls]')" \
	    '["openai/gpt-4.1-nano","stop",true,null]'
	assert_eq "$(last '.response.usage | del(.provider)')" \
	    '{"input":16,"uncached_input":16,"cache_read":0,"cache_write":0,"output":363,"total":379}'
	assert_eq "$(last '.response.usage.provider.prompt_tokens_details')" \
	    '{"cached_tokens":0,"audio_tokens":0}'
	# 16 in at $0.10 and 363 out at $0.40 per million (gpt-4.1-nano).
	assert_eq "$(last '.response.cost')" '"0.0001468"'
	# What went over the wire: the body and the bearer token.
	assert_eq "$(jq -c '[.method, .path, .headers.authorization,
	    .headers["content-type"], .body.model, .body.messages,
	    (.body | has("stream"))]' "$srv_log")" \
	    "[\"POST\",\"/fixture/openai/chat-nonstream-text.json/v1/chat/completions\",\"Bearer $key\",\"application/json\",\"gpt-4.1-nano\",$hi,false]"
}

@test "openai: a stream gives its deltas as they come, then the same result" {
	req r1 openai/gpt-4o '.stream = true' | input
	llm chunk/7/fixture/sse/chat-stream-text-with-usage.sse
	[ "$rc" -eq 0 ]
	text=$(jq -j 'select(.type == "llm.token.delta") | .delta.text // ""' "$out")
	assert_eq "$text" "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app."
	assert_eq "$(jq -c 'select(.type == "llm.token.delta") |
	    select(.delta.finish_reason) | .delta' "$out")" '{"finish_reason":"stop"}'
	assert_eq "$(last --arg t "$text" '[.type, .response.content == $t,
	    .response.finish_reason, .response.model]')" \
	    '["llm.result",true,"stop","openai/gpt-4o"]'
	assert_eq "$(last '.response.usage | del(.provider)')" \
	    '{"input":14,"uncached_input":14,"cache_read":0,"cache_write":0,"output":30,"total":44}'
	# The request asked for the stream and its usage chunk.
	assert_eq "$(jq -c '[.body.stream, .body.stream_options,
	    .headers.accept]' "$srv_log")" \
	    '[true,{"include_usage":true},"text/event-stream"]'
}

@test "openai: parallel tool calls in deltas add up to the non-streamed ones" {
	req r1 openai/gpt-4o '.stream = true' | input
	llm chunk/5/fixture/sse/chat-stream-parallel-tool-calls.sse
	[ "$rc" -eq 0 ]
	# The two were recorded apart, so only their ids differ.
	streamed=$(last '.response.tool_calls | map(del(.id))')
	assert_eq "$(last '.response.tool_calls | map(.id)')" \
	    '["call_JMW1whyEaYG438VE1OIflxA2","call_DNYTawLBoN8fj3KN6qU9N1Ou"]'
	req r1 openai/gpt-4o | input
	llm fixture/openai/chat-nonstream-parallel-tool-calls.json
	assert_eq "$(last '.response.tool_calls | map(del(.id))')" "$streamed"
	assert_eq "$(last '.response.tool_calls | map(.function.name)')" \
	    '["GetWeatherArgs","get_stock_price"]'
	assert_eq "$(last '.response.finish_reason')" '"tool_calls"'
	# Every argument fragment names its call's id, not an index.
	req r1 openai/gpt-4o '.stream = true' | input
	llm fixture/sse/chat-stream-parallel-tool-calls.sse
	[ "$(jq -c 'select(.type == "llm.token.delta") | .delta.tool_calls //
	    empty | .[] | select(.id == null)' "$out" | wc -l)" -eq 0 ]
}

@test "openai: finish_reason length is kept, so the engine marks it truncated" {
	req r1 openai/gpt-4o '.stream = true' | input
	llm fixture/sse/chat-stream-finish-length.sse
	assert_eq "$(last '[.type, .response.finish_reason]')" \
	    '["llm.result","length"]'
}

@test "openai: a refusal is an answer that keeps the text, the words and the reason" {
	req r1 openai/gpt-4o | input
	llm fixture/openai/chat-nonstream-refusal.json
	assert_eq "$(last '[.type, .response.finish_reason, .response.refusal,
	    (.response | has("content")), .response.id]')" \
	    '["llm.result","refusal","I'"'"'m sorry, I can'"'"'t help with that.",false,"chatcmpl-AGRefusal0000000000000000002"]'
	req r1 openai/gpt-4o '.stream = true' | input
	llm fixture/openai/chat-stream-refusal.sse
	# The text said before the refusal streamed, and stays in content.
	assert_eq "$(head -n -1 "$out" | jq -j '.delta.text // empty')" 'Here is the'
	assert_eq "$(last '[.type, .response.content, .response.finish_reason,
	    .response.refusal, .response.id, .response.served_model]')" \
	    '["llm.result","Here is the","refusal","I'"'"'m sorry, I can'"'"'t help with that.","chatcmpl-AGRefusal0000000000000000001","gpt-4o-2024-08-06"]'
	req r1 openai/gpt-4o | input
	llm fixture/openai/chat-nonstream-content-filter.json
	assert_eq "$(last '[.type, .response.content, .response.finish_reason,
	    (.response | has("refusal"))]')" \
	    '["llm.result","The first step is","content_filter",false]'
}

@test "every call says User-Agent agentrt/VERSION; openai's gets OPENAI_ORG_ID and OPENAI_PROJECT_ID" {
	version=$(agentrt-llm --version | awk 'NR == 1 {print $2}')
	{ req r1 openai/gpt-4o
	  req r2 anthropic/claude-x
	  req r3 local/qwen ".providers = {local: {format: \"openai\",
	      base_url: \"$srv/echo/v1\"}}"; } | input
	OPENAI_ORG_ID=org-SENTINEL0000 OPENAI_PROJECT_ID=proj_SENTINEL0000 \
	    llm echo
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c 'select(.path | endswith("/chat/completions")) |
	    [.body.model, .headers["user-agent"], .headers["openai-organization"],
	    .headers["openai-project"]]' "$srv_log" | sort | tr '\n' ' ')" \
	    "[\"gpt-4o\",\"agentrt/$version\",\"org-SENTINEL0000\",\"proj_SENTINEL0000\"] [\"qwen\",\"agentrt/$version\",null,null] "
	assert_eq "$(jq -c 'select(.path | endswith("/messages")) |
	    [.headers["user-agent"], .headers["openai-organization"]]' "$srv_log")" \
	    "[\"agentrt/$version\",null]"
	# A block's own User-Agent wins.
	req r1 local/qwen ".providers = {local: {format: \"openai\",
	    base_url: \"$srv/echo/v1\", headers: {\"User-Agent\": \"mine/1\"}}}" |
	    input
	llm echo
	assert_eq "$(tail -1 "$srv_log" | jq -r '.headers["user-agent"]')" mine/1
}

@test "no key for the provider's own server fails at once, naming the variable" {
	{ req r1 openai/gpt-4o
	  req r2 anthropic/claude-x; } | input
	rc=0
	timeout 10 agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" \
	    2>"$BATS_TEST_TMPDIR/err" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c 'select(.id == "r1") | [.type, .error, .retryable,
	    .detail]' "$out")" \
	    '["llm.error","OPENAI_API_KEY is not set: a call to https://api.openai.com/v1 needs a key (a server of your own: set OPENAI_BASE_URL)",false,{"config":"no_api_key"}]'
	assert_eq "$(jq -c 'select(.id == "r2") | [.error, .detail]' "$out")" \
	    '["ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN): a call to https://api.anthropic.com needs a key (a server of your own: set ANTHROPIC_BASE_URL)",{"config":"no_api_key"}]'
	# A provider block's key variable is the one named.
	req r1 openai/gpt-4o '.providers = {openai: {api_key_env: "TEAM_KEY"}}' |
	    input
	agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$out"
	[[ "$(tail -1 "$out" | jq -r .error)" == "TEAM_KEY is not set: "* ]]
	# A base URL of one's own may go keyless.
	req r1 openai/gpt-4o | input
	llm fixture/openai/chat-nonstream-text.json
	assert_eq "$(last '[.type, (.request // null)]')" '["llm.result",null]'
	assert_eq "$(jq -c '.headers | has("authorization")' "$srv_log")" false
	# So may the provider's own, with the key in a block header instead.
	export MY_TOKEN=sk-proj-SENTINELsecret0000000000000000
	req r1 openai/gpt-4o ".providers = {openai: {headers:
	    {\"Authorization\": \"Bearer \${MY_TOKEN}\"}}}" | input
	# (through a proxy that is not there, so nothing leaves the machine)
	no_proxy= NO_PROXY= https_proxy=http://127.0.0.1:9 \
	    timeout 20 agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$out"
	assert_eq "$(last '[.type, .retryable]')" '["llm.error",true]'
	[[ "$(tail -1 "$out" | jq -r .error)" == "openai: cannot connect: "* ]]
	! grep -q SENTINELsecret "$out" || false
}

# --- openai: failures ---------------------------------------------------

@test "openai: 429 with Retry-After is rate_limited, retryable, with the delay" {
	req r1 openai/o4-mini | input
	OPENAI_API_KEY=$key llm fixture/openai/error-429-rate-limit.http
	[ "$rc" -eq 0 ]
	assert_eq "$(last '[.type, .code, .retryable, .retry_after_ms,
	    .detail.status]')" '["llm.error","rate_limited",true,2000,429]'
	[[ "$(last .error)" == '"openai 429: Rate limit reached for o4-mini'* ]]
}

@test "openai: a 429 for a quota is budget_exceeded and not retried" {
	req r1 openai/gpt-4o | input
	llm fixture/openai/error-429-insufficient-quota.json
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","budget_exceeded",false]'
}

@test "openai: 500 is a retryable provider_error; 400 is not retryable" {
	req r1 openai/gpt-4o | input
	llm fixture/openai/error-500-server-error.json
	assert_eq "$(last '[.code, .retryable, .detail.status]')" \
	    '["provider_error",true,500]'
	[[ "$(last .error)" == '"openai 500: The server had an error'* ]]
	llm fixture/openai/error-400-unsupported-parameter.json
	assert_eq "$(last '[.code, .retryable, .detail.status]')" \
	    '["provider_error",false,400]'
	[[ "$(last .error)" == *"Unsupported parameter"* ]]
	llm status/503
	assert_eq "$(last '[.error, .retryable]')" '["openai 503: scripted 503",true]'
}

@test "openai: a stream cut mid-way is a retryable error, never a truncated success" {
	req r1 openai/gpt-4o '.stream = true' | input
	llm drop/700/fixture/sse/chat-stream-text-with-usage.sse
	[ "$rc" -eq 0 ]
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","provider_error",true]'
	[ "$(grep -c '"llm.result"' "$out")" -eq 0 ]
	llm fixture/sse/chat-stream-truncated-mid-event.sse
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","provider_error",true]'
}

@test "openai: an error inside a 200 stream is the provider's error" {
	req r1 openai/gpt-4o '.stream = true' | input
	llm fixture/sse/chat-stream-midstream-error.sse
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","provider_error",true]'
	[[ "$(last .error)" == *"The server had an error"* ]]
}

@test "openai: a body that is not JSON, or SSE data that is not, is an error" {
	req r1 openai/gpt-4o | input
	llm garbage
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","provider_error",true]'
	[[ "$(last .error)" == *"not JSON"* ]]
	req r1 openai/gpt-4o '.stream = true' | input
	llm fixture/sse/openai-non-json-data.sse
	assert_eq "$(last '[.type, .code]')" '["llm.error","provider_error"]'
}

@test "a call past its deadline is deadline_exceeded, however long the server stalls" {
	deadline=$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%S.000Z)
	req r1 openai/gpt-4o ".deadline = \"$deadline\"" | input
	llm stall/20000/fixture/openai/chat-nonstream-text.json
	[ "$rc" -eq 0 ]
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","deadline_exceeded",true]'
	req r1 openai/gpt-4o '.deadline = "2020-01-01T00:00:00Z"' | input
	llm fixture/openai/chat-nonstream-text.json
	assert_eq "$(last '[.type, .code]')" '["llm.error","deadline_exceeded"]'
	[ ! -s "$srv_log" ] || [ "$(wc -l <"$srv_log")" -eq 1 ]
}

@test "a server that is not there is a retryable provider_error" {
	req r1 openai/gpt-4o | input
	rc=0
	OPENAI_BASE_URL=http://127.0.0.1:1/v1 agentrt-llm \
	    <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	[ "$rc" -eq 0 ]
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","provider_error",true]'
	[[ "$(last .error)" == '"openai: cannot connect'* ]]
}

# --- anthropic ----------------------------------------------------------

@test "anthropic: a stream with a ping gives text deltas and end_turn as stop" {
	req r1 anthropic/claude-3-5-sonnet '.stream = true' | input
	ANTHROPIC_API_KEY=$key llm chunk/3/fixture/sse/messages-stream-text.sse
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -j 'select(.type == "llm.token.delta") |
	    .delta.text // ""' "$out")" "$(last -r '.response.content')"
	assert_eq "$(last '[.type, .response.finish_reason, .response.model]')" \
	    '["llm.result","stop","anthropic/claude-3-5-sonnet"]'
	assert_eq "$(last '.response.usage | [.input, .output, .total]')" '[11,6,17]'
	assert_eq "$(jq -c '[.path, .headers["x-api-key"],
	    .headers["anthropic-version"], .body.max_tokens, .body.stream,
	    .headers.authorization]' "$srv_log")" \
	    "[\"/chunk/3/fixture/sse/messages-stream-text.sse/v1/messages\",\"$key\",\"2023-06-01\",4096,true,null]"
}

@test "anthropic: a provider block's anthropic_version and key variable go in the headers" {
	export TEAM_KEY=sk-ant-team-0123456789
	req r1 team/claude-x ".providers = {team: {format: \"anthropic\",
	    base_url: \"$srv/fixture/sse/messages-stream-text.sse\",
	    api_key_env: \"TEAM_KEY\", anthropic_version: \"2024-10-22\"}} | .stream = true" |
	    input
	llm fixture/sse/messages-stream-text.sse
	[ "$rc" -eq 0 ]
	assert_eq "$(last .type)" '"llm.result"'
	assert_eq "$(jq -c '[.path, .headers["x-api-key"],
	    .headers["anthropic-version"], .headers.authorization]' "$srv_log")" \
	    '["/fixture/sse/messages-stream-text.sse/v1/messages","sk-ant-team-0123456789","2024-10-22",null]'
}

@test "anthropic: tool_use in a stream becomes tool_calls, as without one" {
	req r1 anthropic/claude-sonnet-4 '.stream = true' | input
	llm fixture/sse/messages-stream-tool-use.sse
	# The SDK fixture ends without its last blank line: message_stop is
	# dropped, but message_delta's stop_reason has come, so it is whole.
	assert_eq "$(last '[.type, .response.finish_reason]')" \
	    '["llm.result","tool_calls"]'
	assert_eq "$(last '.response.tool_calls | map(.id, .function.name)')" \
	    '["toolu_01NRLabsLyVHZPKxbKvkfSMn","get_weather"]'
	assert_eq "$(last '.response.tool_calls[0].function.arguments |
	    fromjson')" '{"location":"Paris"}'
	req r1 anthropic/claude-sonnet-4 | input
	llm fixture/anthropic/messages-nonstream-tool-use.json
	assert_eq "$(last '[.response.finish_reason, (.response.tool_calls |
	    map(.function.arguments))]')" '["tool_calls",["{}"]]'
}

@test "anthropic: max_tokens mid tool input drops the call and says length" {
	req r1 anthropic/claude-sonnet-4 '.stream = true' | input
	llm fixture/sse/messages-stream-max-tokens-partial-tool-json.sse
	assert_eq "$(last '[.type, .response.finish_reason, .response.tool_calls]')" \
	    '["llm.result","length",null]'
}

@test "anthropic: overloaded (529, or an error event mid-stream) is retryable" {
	req r1 anthropic/claude-sonnet-4 | input
	llm fixture/anthropic/error-529-overloaded.json
	assert_eq "$(last '[.type, .code, .retryable, .detail.status]')" \
	    '["llm.error","provider_error",true,529]'
	req r1 anthropic/claude-sonnet-4 '.stream = true' | input
	llm fixture/sse/messages-stream-text-then-error.sse
	assert_eq "$(last '[.type, .code, .retryable]')" \
	    '["llm.error","provider_error",true]'
	[[ "$(last .error)" == *"Overloaded"* ]]
	req r1 anthropic/claude-sonnet-4 | input
	llm fixture/anthropic/error-429-rate-limit.http
	assert_eq "$(last '[.code, .retryable, (.retry_after_ms > 0)]')" \
	    '["rate_limited",true,true]'
	llm fixture/anthropic/error-400-invalid-request.json
	assert_eq "$(last '[.code, .retryable]')" '["provider_error",false]'
}

# --- many at once, fallback, provider blocks -----------------------------

@test "calls are in flight together: a fast answer overtakes a slow one" {
	{
		req slow openai/gpt-4o
		req fast anthropic/claude-sonnet-4
	} | input
	rc=0
	OPENAI_BASE_URL="$srv/stall/1500/fixture/openai/chat-nonstream-text.json/v1" \
	ANTHROPIC_BASE_URL="$srv/fixture/anthropic/messages-nonstream-tool-use.json" \
	    agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[.id, .type]' "$out" | tr -d '\n')" \
	    '["fast","llm.result"]["slow","llm.result"]'
}

@test "a failing model falls back to the next, and the result names it" {
	req r1 openai/gpt-4o '.fallback = ["anthropic/claude-sonnet-4"]' | input
	rc=0
	OPENAI_BASE_URL="$srv/status/500/v1" \
	ANTHROPIC_BASE_URL="$srv/fixture/anthropic/messages-nonstream-tool-use.json" \
	    agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	assert_eq "$(last '[.type, .response.model, .response.finish_reason]')" \
	    '["llm.result","anthropic/claude-sonnet-4","tool_calls"]'
	assert_eq "$(jq -r .path "$srv_log" | tr '\n' ' ')" \
	    "/status/500/v1/chat/completions /fixture/anthropic/messages-nonstream-tool-use.json/v1/messages "
	# When every model fails, the last one's error is the call's.
	req r1 openai/gpt-4o '.fallback = ["anthropic/x"]' | input
	OPENAI_BASE_URL="$srv/status/500/v1" ANTHROPIC_BASE_URL="$srv/status/400" \
	    agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out"
	assert_eq "$(last '[.type, .error, .retryable]')" \
	    '["llm.error","anthropic 400: scripted 400",false]'
}

@test "a provider block names a server: format, base URL, key variable, headers" {
	export LOCAL_KEY=sk-local-0123456789abcdef TEAM=blue
	req r1 local/qwen ".providers = {local: {format: \"openai\",
	    base_url: \"$srv/fixture/openai/chat-nonstream-text.json/v1\",
	    api_key_env: \"LOCAL_KEY\",
	    headers: {\"X-Team\": \"team-\${TEAM}\"}}}" | input
	rc=0
	agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" || rc=$?
	out=$BATS_TEST_TMPDIR/out
	assert_eq "$(last '[.type, .response.model]')" '["llm.result","local/qwen"]'
	assert_eq "$(jq -c '[.headers.authorization, .headers["x-team"],
	    .body.model]' "$srv_log")" \
	    '["Bearer sk-local-0123456789abcdef","team-blue","qwen"]'
	req r1 other/x '.providers = {other: {format: "openai"}}' | input
	agentrt-llm <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out"
	assert_eq "$(last '[.type, .error, .retryable]')" \
	    "[\"llm.error\",\"provider 'other' has no base_url\",false]"
}

@test "a worker-run call with a format holds and gets the provider's own body" {
	jq -nc '{type: "decision.request", session_id: "s1", decision_id: "d1",
	    agent: {}, trigger: {type: "llm.execute", id: "c1", attempt: 1,
	    stream: false, format: "openai", request: {model: "gpt-4o",
	    messages: [{role: "user", content: "hi"}]}}}' | input
	llm fixture/openai/chat-nonstream-parallel-tool-calls.json -m openai/gpt-4o
	assert_eq "$(last '[.type, .decision_id, .actions[0].type,
	    .actions[0].response.object,
	    (.actions[0].response.choices[0].message.tool_calls | length)]')" \
	    '["decision.response","d1","llm.result","chat.completion",2]'
	jq -nc '{type: "decision.request", session_id: "s1", decision_id: "d1",
	    agent: {}, trigger: {type: "llm.execute", id: "c1", attempt: 1,
	    stream: true, format: "anthropic", request: {model: "claude",
	    max_tokens: 100, messages: [{role: "user", content: "hi"}]}}}' | input
	llm fixture/sse/messages-stream-tool-use.sse -m anthropic/claude
	assert_eq "$(last '.actions[0].response | [.type, .stop_reason,
	    (.content | map(.type))]')" \
	    '["message","tool_use",["text","tool_use"]]'
	assert_eq "$(jq -c 'select(.path | endswith("/v1/messages")) |
	    [.body.model, .body.stream, .body.max_tokens]' "$srv_log" | tail -1)" \
	    '["claude",true,100]'
}

# --- cassettes, prices, keys --------------------------------------------

@test "--record keeps each exchange; --replay answers from it with no server" {
	{
		req r1 openai/gpt-4o '.stream = true'
		req r2 anthropic/claude-sonnet-4
		req r3 openai/gpt-4o '.request.messages[0].content = "fail"'
	} | input
	rc=0
	OPENAI_BASE_URL="$srv/fixture/sse/chat-stream-text-with-usage.sse/v1" \
	ANTHROPIC_BASE_URL="$srv/fixture/anthropic/messages-nonstream-tool-use.json" \
	OPENAI_API_KEY=$key ANTHROPIC_API_KEY=$key \
	    agentrt-llm --record "$BATS_TEST_TMPDIR/tape" \
	    <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/live" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/tape")" -eq 3 ]
	jq -e -s 'map(.type == "llm.exchange" and (.key | length) == 64) | all' \
	    "$BATS_TEST_TMPDIR/tape" >/dev/null
	stop_server
	# No server, no keys: the replay gives the same lines.
	agentrt-llm --replay "$BATS_TEST_TMPDIR/tape" <"$BATS_TEST_TMPDIR/in" \
	    >"$BATS_TEST_TMPDIR/replayed"
	assert_eq "$(jq -Sc . "$BATS_TEST_TMPDIR/replayed" | sort)" \
	    "$(jq -Sc . "$BATS_TEST_TMPDIR/live" | sort)"
	# A request never recorded is an error, not a guess.
	req r9 openai/gpt-4o '.request.messages[0].content = "new"' |
	    agentrt-llm --replay "$BATS_TEST_TMPDIR/tape" >"$BATS_TEST_TMPDIR/out"
	out=$BATS_TEST_TMPDIR/out
	assert_eq "$(last '[.type, .retryable]')" '["llm.error",false]'
	[[ "$(last .error)" == *"no exchange in the cassette"* ]]
	! grep -q "$key" "$BATS_TEST_TMPDIR/tape" || false
}

@test "--prices adds a model's price; an unknown model has no cost" {
	echo '{"openai/house":{"input":"1","output":"2"}}' >"$BATS_TEST_TMPDIR/p.json"
	req r1 openai/house | input
	# The fixture's served model is unknown to the table: the requested
	# one's price, 16 in at $1 and 363 out at $2 per million.
	SERVER_FIXTURES="$BATS_TEST_TMPDIR/fx"
	mkdir -p "$SERVER_FIXTURES/openai"
	jq '.model = "ft:gpt-4o-mini:acme::x1"' \
	    "$fixtures/openai/chat-nonstream-text.json" \
	    >"$SERVER_FIXTURES/openai/ft.json"
	stop_server
	start_server
	llm fixture/openai/ft.json --prices "$BATS_TEST_TMPDIR/p.json"
	assert_eq "$(last '.response | [.model, .served_model, .cost]')" \
	    '["openai/house","ft:gpt-4o-mini:acme::x1","0.000742"]'
	llm fixture/openai/ft.json
	assert_eq "$(last '.response | has("cost")')" 'false'
	AGENTRT_PRICES="$BATS_TEST_TMPDIR/p.json" llm fixture/openai/ft.json
	assert_eq "$(last '.response.cost')" '"0.000742"'
}

@test "a call is priced by the model that served it when the table knows it" {
	echo '{"openai/house":{"input":"1","output":"2"}}' >"$BATS_TEST_TMPDIR/p.json"
	req r1 openai/house | input
	llm fixture/openai/chat-nonstream-text.json --prices "$BATS_TEST_TMPDIR/p.json"
	# gpt-4.1-nano-2025-04-14 is openai/gpt-4.1-nano: $0.10 in, $0.40 out.
	assert_eq "$(last '.response | [.model, .served_model, .id, .cost]')" \
	    '["openai/house","gpt-4.1-nano-2025-04-14","chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU","0.0001468"]'
}

@test "the API key reaches only the request's headers, even when the server quotes it" {
	{
		req r1 openai/gpt-4o
		req r2 openai/gpt-4o '.stream = true'
		req r3 anthropic/claude-sonnet-4
	} | input
	rc=0
	# echo answers 200 with the headers it got, key and all: not a
	# completion, so an error, which must not quote it.
	OPENAI_API_KEY=$key ANTHROPIC_API_KEY=$key \
	OPENAI_BASE_URL="$srv/echo/v1" ANTHROPIC_BASE_URL="$srv/echo" \
	    agentrt-llm --record "$BATS_TEST_TMPDIR/tape" \
	    <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" \
	    2>"$BATS_TEST_TMPDIR/err" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(grep -c "$key" "$srv_log")" -ge 3 ]	# it was sent
	! grep -q "$key" "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err" \
	    "$BATS_TEST_TMPDIR/tape" || false
	! grep -q "${key:10}" "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/tape" || false
	[ "$(grep -c '"llm.error"' "$BATS_TEST_TMPDIR/out")" -eq 3 ]
}

# --- bad options ----------------------------------------------------------

@test "a cassette or price file that cannot be read is a usage error" {
	req r1 openai/gpt-4o | input
	llm echo --replay "$BATS_TEST_TMPDIR/none"
	[ "$rc" -eq 2 ]
	[[ "$(cat "$err")" == *"cassette '$BATS_TEST_TMPDIR/none': No such file"* ]]
	echo '{"type":"llm.exchange"}' >"$BATS_TEST_TMPDIR/bad"
	llm echo --replay "$BATS_TEST_TMPDIR/bad"
	[ "$rc" -eq 2 ]
	[[ "$(cat "$err")" == *"bad:1: no model"* ]]
	echo '{"m/x":{"input":"free"}}' >"$BATS_TEST_TMPDIR/p.json"
	llm echo --prices "$BATS_TEST_TMPDIR/p.json"
	[ "$rc" -eq 2 ]
	[[ "$(cat "$err")" == *"'m/x': 'input' is not a price"* ]]
	llm echo --record /nonexistent/dir/tape
	[ "$rc" -eq 2 ]
	[[ "$(cat "$err")" == *"--record '/nonexistent/dir/tape'"* ]]
}

# --- response_format: each provider's structured output, and the mock's ---
# What each provider is sent (OpenAI a json_schema response_format,
# Anthropic a forced tool) and that the answer comes back the same from
# both, as the llm.result's content.

sa_hi='[{"role":"user","content":"Weather in Paris and Oslo?"}]'
schema='{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}'
rf="{\"name\":\"structured_answer\",\"description\":\"The answer\",\"schema\":$schema}"
now='{"name":"now","description":"The time"}'
# The answer the fixtures hold, compact.
answer='{"summary":"Paris is 18C and sunny; Oslo is 4C with rain.","columns":["city","weather"],"rows":[{"cells":["Paris","18C, sunny"]},{"cells":["Oslo","4C, rain"]}],"followups":["Show tomorrow'"'"'s forecast"]}'

# req_rf ID MODEL [JQ]: an llm.request with the response_format, for s1.
req_rf() {
	jq -nc --arg id "$1" --arg model "$2" --argjson m "$sa_hi" \
	    --argjson rf "$rf" \
	    "{type: \"llm.request\", session_id: \"s1\", id: \$id, attempt: 1,
	      request: {model: \$model, messages: \$m, response_format: \$rf}} |
	      ${3:-.}"
}

@test "openai: response_format goes as a json_schema one beside the tools; the content is the answer" {
	req_rf r1 openai/gpt-4.1-nano ".request.tools = [$now]" | input
	llm fixture/openai/chat-nonstream-structured-answer.json
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '.body.response_format' "$srv_log")" \
	    "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"structured_answer\",\"description\":\"The answer\",\"schema\":$schema,\"strict\":false}}"
	assert_eq "$(jq -c '[.body.tools[].function.name, .body.tool_choice]' \
	    "$srv_log")" '["now",null]'
	assert_eq "$(last '[.type, .response.finish_reason,
	    (.response | has("tool_calls"))]')" '["llm.result","stop",false]'
	assert_eq "$(last -r '.response.content')" "$answer"
}

@test "anthropic: response_format alone is a tool the model must call; its input is the content" {
	req_rf r1 anthropic/claude-haiku-4-5 | input
	llm fixture/anthropic/messages-nonstream-structured-answer.json
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[.body.tools, .body.tool_choice,
	    has("response_format")]' "$srv_log" | head -1)" \
	    "[[{\"name\":\"structured_answer\",\"description\":\"The answer\",\"input_schema\":$schema}],{\"type\":\"tool\",\"name\":\"structured_answer\"},false]"
	assert_eq "$(last '[.type, .response.finish_reason,
	    (.response | has("tool_calls"))]')" '["llm.result","stop",false]'
	assert_eq "$(last -r '.response.content')" "$answer"
}

@test "anthropic: beside real tools the choice is any; streamed, the answer comes as text" {
	req_rf r1 anthropic/claude-sonnet-4 ".request.tools = [$now] |
	    .stream = true" | input
	llm fixture/anthropic/messages-stream-structured-answer.sse
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[[.body.tools[].name], .body.tool_choice,
	    .body.stream]' "$srv_log")" \
	    '[["now","structured_answer"],{"type":"any"},true]'
	# No delta names a tool call; the text deltas spell the answer.
	assert_eq "$(jq -c 'select(.type == "llm.token.delta") |
	    select(.delta.tool_calls)' "$out" | wc -l)" 0
	text=$(jq -j 'select(.type == "llm.token.delta") | .delta.text // ""' "$out")
	assert_eq "$(jq -c . <<<"$text")" "$answer"
	assert_eq "$(last '[.type, .response.finish_reason,
	    (.response | has("tool_calls"))]')" '["llm.result","stop",false]'
	assert_eq "$(last -r '.response.content')" "$answer"
}

@test "anthropic: with extended thinking the tool is offered, not forced" {
	req_rf r1 anthropic/claude-sonnet-4 '.request.reasoning = {enabled: true}' |
	    input
	llm fixture/anthropic/messages-nonstream-structured-answer.json
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[.body.thinking.type, .body.tool_choice]' \
	    "$srv_log")" '["enabled",{"type":"auto"}]'
	assert_eq "$(last -r '.response.content')" "$answer"
}

@test "a response_format without a schema is a bad_request, and nothing is sent" {
	{ req_rf r1 openai/gpt-4o '.request.response_format |= del(.schema)'
	  req_rf r2 anthropic/claude-x '.request.response_format |= del(.schema)'
	} | input
	llm echo
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[.id, .type, .error, .retryable]' "$out")" \
	    "$(printf '%s\n%s' \
	    '["r1","llm.error","openai: response_format: missing field '"'"'schema'"'"' (model openai/gpt-4o)",false]' \
	    '["r2","llm.error","response_format: missing field '"'"'schema'"'"' (model anthropic/claude-x)",false]')"
	# A request the format cannot carry is final: code bad_request.
	assert_eq "$(jq -r .code "$out" | sort -u)" bad_request
	[ ! -s "$srv_log" ]
}

@test "mock: echo answers a response_format in JSON; a script's json step is its compact JSON" {
	plan='{"name":"todo_plan","schema":{"type":"object","properties":{"todos":{"type":"array"}}}}'
	{ req_rf r1 mock/echo
	  req_rf r2 mock/echo ".request.response_format = $plan"
	  req_rf r3 mock/script '.mock = {script: [{json: {summary: "Done.",
	      rows: [{cells: ["a", "b"]}]}}]}'
	  req_rf r4 mock/script '.mock = {script: [{content: "x", json: 1}]}'
	} | input
	llm echo
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -r 'select(.id == "r1") | .response.content' "$out")" \
	    '{"summary":"Weather in Paris and Oslo?"}'
	assert_eq "$(jq -r 'select(.id == "r2") | .response.content' "$out")" \
	    '{"todos":[{"title":"Weather in Paris and Oslo?"}]}'
	assert_eq "$(jq -r 'select(.id == "r3") | .response.content' "$out")" \
	    '{"summary":"Done.","rows":[{"cells":["a","b"]}]}'
	assert_eq "$(jq -c 'select(.id == "r4") | [.type, .error]' "$out")" \
	    '["llm.error","mock script step 0: fields '"'"'content'"'"' and '"'"'json'"'"' together: a reply is one or the other"]'
}
