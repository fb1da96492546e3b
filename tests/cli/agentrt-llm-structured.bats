#!/usr/bin/env bats
# agentrt-llm and a request's response_format: what each provider is sent
# (OpenAI a json_schema response_format, Anthropic a forced tool) and that
# the answer comes back the same from both, as the llm.result's content,
# over loopback against tests/helpers/llmserver.py serving the
# structured-answer fixtures; and the mock's answers to it.

load lib

setup() {
	start_server
}

teardown() {
	stop_server
}

hi='[{"role":"user","content":"Weather in Paris and Oslo?"}]'
schema='{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}'
rf="{\"name\":\"structured_answer\",\"description\":\"The answer\",\"schema\":$schema}"
now='{"name":"now","description":"The time"}'
# The answer the fixtures hold, compact.
answer='{"summary":"Paris is 18C and sunny; Oslo is 4C with rain.","columns":["city","weather"],"rows":[{"cells":["Paris","18C, sunny"]},{"cells":["Oslo","4C, rain"]}],"followups":["Show tomorrow'"'"'s forecast"]}'

# req ID MODEL [JQ]: an llm.request with the response_format, for s1.
req() {
	jq -nc --arg id "$1" --arg model "$2" --argjson m "$hi" \
	    --argjson rf "$rf" \
	    "{type: \"llm.request\", session_id: \"s1\", id: \$id, attempt: 1,
	      request: {model: \$model, messages: \$m, response_format: \$rf}} |
	      ${3:-.}"
}

# llm SCENARIO [ARGS...]: agentrt-llm on the file in, both providers at
# $srv/SCENARIO; out, err, rc.
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

last() {
	tail -1 "$out" | jq -c "${@:-.}"
}

@test "openai: response_format goes as a json_schema one beside the tools; the content is the answer" {
	req r1 openai/gpt-4.1-nano ".request.tools = [$now]" | input
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
	req r1 anthropic/claude-haiku-4-5 | input
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
	req r1 anthropic/claude-sonnet-4 ".request.tools = [$now] |
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
	req r1 anthropic/claude-sonnet-4 '.request.reasoning = {enabled: true}' |
	    input
	llm fixture/anthropic/messages-nonstream-structured-answer.json
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[.body.thinking.type, .body.tool_choice]' \
	    "$srv_log")" '["enabled",{"type":"auto"}]'
	assert_eq "$(last -r '.response.content')" "$answer"
}

@test "a response_format without a schema is a bad_request, and nothing is sent" {
	{ req r1 openai/gpt-4o '.request.response_format |= del(.schema)'
	  req r2 anthropic/claude-x '.request.response_format |= del(.schema)'
	} | input
	llm echo
	[ "$rc" -eq 0 ]
	assert_eq "$(jq -c '[.id, .type, .error, .retryable]' "$out")" \
	    "$(printf '%s\n%s' \
	    '["r1","llm.error","openai: response_format: missing field '"'"'schema'"'"'",false]' \
	    '["r2","llm.error","response_format: missing field '"'"'schema'"'"'",false]')"
	[ ! -s "$srv_log" ]
}

@test "mock: echo answers a response_format in JSON; a script's json step is its compact JSON" {
	plan='{"name":"todo_plan","schema":{"type":"object","properties":{"todos":{"type":"array"}}}}'
	{ req r1 mock/echo
	  req r2 mock/echo ".request.response_format = $plan"
	  req r3 mock/script '.mock = {script: [{json: {summary: "Done.",
	      rows: [{cells: ["a", "b"]}]}}]}'
	  req r4 mock/script '.mock = {script: [{content: "x", json: 1}]}'
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
