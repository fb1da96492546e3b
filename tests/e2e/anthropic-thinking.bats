#!/usr/bin/env bats
# Anthropic fidelity in whole rings over loopback HTTP
# (tests/helpers/llmserver.py): extended thinking across a tool loop (the
# thinking and redacted_thinking blocks go back first, signatures intact),
# a fallback to OpenAI that drops them, the security pipeline dropping a
# block it would redact, a refusal that keeps what was said, a message
# with no message_delta, and ANTHROPIC_AUTH_TOKEN as a bearer token.

load lib

SIG=EqQBCkgIBhABGAIiQFAKEsig0thinking0tool0loop0SENTINEL0000000000000000
SIG2=EqQBCkgIBhABGAIiQFAKEsig1second0block0SENTINEL00000000000000000000
DATA=EmwKAhgBEgyFAKEredacted0thinking0data0SENTINEL000000000000000000000
THOUGHT='The user wants a sum. I should call add with 1 and 2.'

setup() {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	# The add-tool agent, thinking on, streamed; JQ changes it.
	think_agent think .
}

teardown() {
	stop_server
}

# think_agent NAME JQ: an agent file NAME, http-anthropic with thinking on.
think_agent() {
	jq ".model = \"anthropic/claude-sonnet-4-5\" |
	    .reasoning = {enabled: true, max_tokens: 1024} | $2" \
	    "$top_srcdir/tests/fixtures/agents/http-anthropic.json" \
	    >"$BATS_TEST_TMPDIR/agents/$1.json"
}

# think_ring AGENT BASE: the ring on AGENT, Anthropic at $srv/BASE.
think_ring() {
	ANTHROPIC_BASE_URL="$srv/$2" \
	ANTHROPIC_API_KEY=sk-ant-SENTINEL-ring-000111222333 \
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a "$1" -m 'add 1 and 2'
}

# req N JQ: request N's (1-based) logged line through jq, compact.
req() {
	sed -n "${1}p" "$srv_log" | jq -c "$2"
}

@test "thinking and tool_use: the next request sends the signed block back first" {
	start_server
	think_ring think seq/anthropic/messages-stream-thinking-tool-use.sse,messages-stream-thinking-text.sse
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"The sum is 3."'
	assert_eq "$(events 'select(.type=="tool_result") | .result')" '"3"'
	assert_eq "$(wc -l <"$srv_log")" 2
	assert_eq "$(req 1 '.body.thinking')" '{"type":"enabled","budget_tokens":1024}'
	# The assistant turn that called the tool: thinking, text, tool_use.
	assert_eq "$(req 2 '[.body.messages[] | .role]')" '["user","assistant","user"]'
	assert_eq "$(req 2 '.body.messages[1].content | map(.type)')" \
	    '["thinking","text","tool_use"]'
	assert_eq "$(req 2 '.body.messages[1].content[0]')" \
	    "$(jq -nc --arg t "$THOUGHT" --arg s "$SIG" \
	    '{type: "thinking", thinking: $t, signature: $s}')"
	assert_eq "$(req 2 '.body.messages[1].content[2] | [.id, .input]')" \
	    '["toolu_think_1",{"a":1,"b":2}]'
	# The recorded message keeps the blocks; reasoning stays as it was.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.completed") |
	    .response][0] | [.reasoning, (.thinking_blocks | map(.signature))]')" \
	    "$(jq -nc --arg t "$THOUGHT" --arg s "$SIG" '[$t, [$s]]')"
}

@test "redacted_thinking: its opaque data goes back, in order, before the thinking block" {
	start_server
	think_ring think seq/anthropic/messages-stream-redacted-thinking-tool-use.sse,messages-stream-thinking-text.sse
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"The sum is 3."'
	assert_eq "$(req 2 '.body.messages[1].content | map(.type)')" \
	    '["redacted_thinking","thinking","tool_use"]'
	assert_eq "$(req 2 '.body.messages[1].content[0:2] | map(.data // .signature)')" \
	    "[\"$DATA\",\"$SIG2\"]"
}

@test "a fallback to OpenAI after an Anthropic thinking reply drops the blocks, no error" {
	start_server
	think_agent think-fb '.fallback = ["openai/mock-model"]'
	OPENAI_BASE_URL="$srv/loop/1/v1" OPENAI_API_KEY=sk-SENTINEL-openai-000111 \
	    think_ring think-fb seq/anthropic/messages-stream-thinking-tool-use.sse,error-400-invalid-request.json
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"done after 1 steps"'
	assert_eq "$(wc -l <"$srv_log")" 3
	assert_eq "$(req 3 '.path')" '"/loop/1/v1/chat/completions"'
	assert_eq "$(req 3 '[.body.messages[] | .role]')" \
	    '["system","user","assistant","tool"]'
	assert_eq "$(req 3 '.body.messages[2] | [.content, .tool_calls[0].id]')" \
	    '["I'"'"'ll add them.","toolu_think_1"]'
	# Nothing of the thinking, under any name, reached OpenAI.
	assert_eq "$(req 3 '[.body | .. | objects | keys[] |
	    select(test("thinking|signature|reasoning"))]')" '[]'
	! sed -n 3p "$srv_log" | grep -q "$SIG" || fail "the signature went to OpenAI"
}

@test "security: a thinking block the pipeline would redact is dropped, and the event says so" {
	local sent="sk-proj-SENTINEL$(printf '%024d' 19)" fx="$BATS_TEST_TMPDIR/fx"
	mkdir -p "$fx/anthropic"
	cp "$top_srcdir"/tests/fixtures/anthropic/*.sse "$fx/anthropic/"
	sed "s/I should call add/I see $sent; I should call add/" \
	    "$fx/anthropic/messages-stream-thinking-tool-use.sse" \
	    >"$fx/anthropic/leaky.sse"
	SERVER_FIXTURES=$fx start_server
	think_agent think-sec '.security = {}'
	think_ring think-sec seq/anthropic/leaky.sse,messages-stream-thinking-text.sse
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"The sum is 3."'
	# The block's signature cannot hold for a redacted text: it is gone.
	assert_eq "$(req 2 '.body.messages[1].content | map(.type)')" \
	    '["text","tool_use"]'
	events 'select(.type=="security") | .detail' |
	    grep -q 'in model thinking block (dropped)' || fail "no event"
	! grep -r -a -F -q "$sent" "$AGENTRT_DB" "$EVENTS" \
	    "$BATS_TEST_TMPDIR/stages.err" || fail "the key was kept"
	agentrt-session log "$(the_session)" | grep -q 'redacted:openai_key' ||
	    fail "the reasoning was not redacted"
}

@test "a refusal ends the turn with what was said and code refused" {
	start_server
	think_ring think fixture/anthropic/messages-stream-refusal.sse
	assert_eq "$(events 'select(.type=="completion") | [.text, .code, .error]')" \
	    '["I can help with part of","refused","the model refused"]'
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.completed") |
	    .response | [.content, .finish_reason]]')" \
	    '[["I can help with part of","refusal"]]'
	[[ "$output" == *"turn failed (refused): the model refused"* ]] ||
	    fail "$output"
}

@test "a message_stop with no message_delta before it is a whole answer" {
	start_server
	think_ring think fixture/anthropic/messages-stream-no-message-delta.sse
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | [.text, .error]')" \
	    '["Hello there",null]'
	assert_eq "$(wc -l <"$srv_log")" 1
}

@test "ANTHROPIC_AUTH_TOKEN goes out as a bearer token and nowhere else" {
	local tok="sk-ant-oat01-SENTINEL$(printf '%020d' 4)"
	start_server
	ANTHROPIC_BASE_URL="$srv/loop/1" ANTHROPIC_AUTH_TOKEN=$tok \
	    AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a think -m 'add it up'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type=="completion") | .text')" '"done after 1 steps"'
	assert_eq "$(jq -r '.headers.authorization' "$srv_log" | sort -u)" "Bearer $tok"
	assert_eq "$(jq -c '.headers["x-api-key"]' "$srv_log" | sort -u)" null
	agentrt-session log "$(the_session)" >"$BATS_TEST_TMPDIR/log.ndjson"
	! grep -r -a -F -q "$tok" "$AGENTRT_DB" "$EVENTS" "$BATS_TEST_TMPDIR/log.ndjson" \
	    "$BATS_TEST_TMPDIR/stages.err" <<<"$output" || fail "the token was kept"
	[[ "$output" != *"$tok"* ]] || fail "the token was printed"
	# With a key as well, both go, as the official SDK sends them.
	: >"$srv_log"
	ANTHROPIC_BASE_URL="$srv/loop/1" ANTHROPIC_AUTH_TOKEN=$tok \
	ANTHROPIC_API_KEY=sk-ant-SENTINEL-key-0001 \
	    AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a think -m 'again'
	assert_eq "$(jq -c '[.headers.authorization, .headers["x-api-key"]]' "$srv_log" | sort -u)" \
	    "[\"Bearer $tok\",\"sk-ant-SENTINEL-key-0001\"]"
}

@test "a cassette keeps the thinking blocks: --replay gives them back, signatures intact" {
	start_server
	jq -nc '{type: "llm.request", session_id: "s1", id: "r1", attempt: 1,
	    stream: true, request: {model: "anthropic/claude-x",
	    messages: [{role: "user", content: "1+2?"}]}}' >"$BATS_TEST_TMPDIR/in"
	ANTHROPIC_BASE_URL="$srv/fixture/anthropic/messages-stream-redacted-thinking-tool-use.sse" \
	ANTHROPIC_API_KEY=sk-ant-SENTINEL-tape-0001 \
	    agentrt-llm --record "$BATS_TEST_TMPDIR/tape.ndjson" \
	    <"$BATS_TEST_TMPDIR/in" | tail -1 | jq -c .response.thinking_blocks \
	    >"$BATS_TEST_TMPDIR/live"
	agentrt-llm --replay "$BATS_TEST_TMPDIR/tape.ndjson" <"$BATS_TEST_TMPDIR/in" |
	    tail -1 | jq -c .response.thinking_blocks >"$BATS_TEST_TMPDIR/replayed"
	assert_eq "$(jq -c 'map(.data // .signature)' "$BATS_TEST_TMPDIR/live")" \
	    "[\"$DATA\",\"$SIG2\"]"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/replayed")" "$(cat "$BATS_TEST_TMPDIR/live")"
	assert_eq "$(wc -l <"$srv_log")" 1
}

@test "a cassette recorded under the security pipeline keeps no secret of the thinking" {
	local sent="sk-proj-SENTINEL$(printf '%024d' 23)" fx="$BATS_TEST_TMPDIR/fx"
	mkdir -p "$fx/anthropic"
	sed "s/I should call add/I see $sent; I should call add/" \
	    "$top_srcdir/tests/fixtures/anthropic/messages-stream-thinking-tool-use.sse" \
	    >"$fx/anthropic/leaky.sse"
	SERVER_FIXTURES=$fx start_server
	jq -nc '{type: "llm.request", session_id: "s1", id: "r1", attempt: 1,
	    stream: true, security: {}, request: {model: "anthropic/claude-x",
	    messages: [{role: "user", content: "1+2?"}]}}' >"$BATS_TEST_TMPDIR/in"
	ANTHROPIC_BASE_URL="$srv/fixture/anthropic/leaky.sse" \
	ANTHROPIC_API_KEY=sk-ant-SENTINEL-tape-0002 \
	    agentrt-llm --record "$BATS_TEST_TMPDIR/tape.ndjson" \
	    <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out"
	# The live answer has the secret: only the cassette is screened.
	grep -q -F "$sent" "$BATS_TEST_TMPDIR/out" || fail "the fixture has no secret"
	! grep -q -F "$sent" "$BATS_TEST_TMPDIR/tape.ndjson" ||
	    fail "the secret reached the cassette"
	grep -q 'redacted:openai_key' "$BATS_TEST_TMPDIR/tape.ndjson" ||
	    fail "the reasoning was not redacted"
	# The block it was in cannot be sent back redacted: it is gone.
	! grep -q -F "$SIG" "$BATS_TEST_TMPDIR/tape.ndjson" ||
	    fail "the redacted block was kept"
}

@test "file parts reach Anthropic as document blocks: a PDF as base64, Markdown as its text" {
	start_server
	think_agent doc 'del(.reasoning) | del(.tools)'
	local pdf md
	pdf=$(printf '%%PDF-1.4 sentinel' | base64 -w0)
	md=$(printf '# Notes\n\n- one\n' | base64 -w0)
	ANTHROPIC_BASE_URL="$srv/fixture/sse/messages-stream-text.sse" \
	ANTHROPIC_API_KEY=sk-ant-SENTINEL-ring-000111222333 \
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a doc --input "$(jq -nc \
	    --arg pdf "data:application/pdf;base64,$pdf" \
	    --arg md "data:text/markdown;base64,$md" '{type: "client.message",
	    message: {role: "user", content: [{type: "text", text: "sum up"},
	    {type: "file", file: {filename: "r.pdf", file_data: $pdf}},
	    {type: "file", file: {filename: "notes.md", file_data: $md}}]}}')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(req 1 '.body.messages[0].content')" "$(jq -nc --arg pdf "$pdf" '[
	    {type: "text", text: "sum up"},
	    {type: "document", source: {type: "base64",
	        media_type: "application/pdf", data: $pdf}, title: "r.pdf"},
	    {type: "document", source: {type: "text", media_type: "text/plain",
	        data: "# Notes\n\n- one\n"}, title: "notes.md"}]')"
	# An image as a file: refused before anything is sent, the turn failed.
	ANTHROPIC_BASE_URL="$srv/fixture/sse/messages-stream-text.sse" \
	ANTHROPIC_API_KEY=sk-ant-SENTINEL-ring-000111222333 \
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a doc --input \
	    '{"type":"client.message","message":{"role":"user","content":[{"type":"file","file":{"filename":"a.png","file_data":"data:image/png;base64,AAAA"}}]}}'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ $output == *"content[0]: file 'a.png' is image/png: Anthropic reads PDF and text documents only (model anthropic/claude-sonnet-4-5)"* ]] ||
	    fail "$output"
	assert_eq "$(wc -l <"$srv_log")" 1
}
