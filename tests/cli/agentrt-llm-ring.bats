#!/usr/bin/env bats
# agentrt-llm in a whole ring against the loopback model server: what the
# provider said about itself (its response id, the model that served the
# call) reaches the store and the price; a refusal ends the turn showing
# what was said; a setup no call can succeed with fails the turn at once
# instead of parking it.

load ../e2e/lib

setup() {
	start_server
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS"
}

teardown() {
	stop_server
}

# agent NAME JSON: an agent file the ring finds.
agent() {
	printf '%s\n' "$2" >"$BATS_TEST_TMPDIR/agents/$1.json"
}

# The payloads of the session's log of type T, compact.
payloads() {
	log_of "[.[].payload | select(.type == \"$1\")]"
}

@test "the served model and the response id reach llm.result and the store; the price is the served model's" {
	agent served '{"model": "openai/gpt-4o"}'
	OPENAI_BASE_URL="$srv/fixture/openai/chat-nonstream-text.json/v1" \
	    ring -a served -m 'a holiday, please'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(payloads llm.call.completed | jq -c '.[0].response |
	    [.model, .served_model, .id, .cost]')" \
	    '["openai/gpt-4o","gpt-4.1-nano-2025-04-14","chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU","0.0001468"]'
	# gpt-4o's own price would be 16 * 2.50 + 363 * 10.00 per million.
	assert_eq "$(events 'select(.type=="metrics") | [.model, .cost]')" \
	    '["openai/gpt-4o","0.0001468"]'
}

@test "a streamed refusal ends the turn: the text said before it kept, the refusal the reason" {
	agent refuser '{"model": "openai/gpt-4o", "stream": true}'
	OPENAI_BASE_URL="$srv/fixture/openai/chat-stream-refusal.sse/v1" \
	    ring -a refuser -m 'something it will not do'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == *"agentrt-session: turn failed (refused): the model refused: I'm sorry, I can't help with that."* ]] ||
	    fail "$output"
	assert_eq "$(payloads turn.completed | jq -c '.[0] | [.data, .code, .error]')" \
	    '["Here is the","refused","the model refused: I'"'"'m sorry, I can'"'"'t help with that."]'
	assert_eq "$(payloads llm.call.completed | jq -c '.[0].response |
	    [.content, .finish_reason, .refusal]')" \
	    '["Here is the","refusal","I'"'"'m sorry, I can'"'"'t help with that."]'
	# The reply is in the transcript; the turn did not park.
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" failed
	assert_eq "$(payloads session.interrupted)" '[]'
	assert_eq "$(events 'select(.type=="completion") | [.text, .code]')" \
	    '["Here is the","refused"]'
}

@test "a content_filter finish, not streamed, ends the turn the same way" {
	agent filtered '{"model": "openai/gpt-4o"}'
	OPENAI_BASE_URL="$srv/fixture/openai/chat-nonstream-content-filter.json/v1" \
	    ring -a filtered -m 'go on'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$(payloads turn.completed | jq -c '.[0] | [.data, .code, .error]')" \
	    '["The first step is","refused","the provider'"'"'s content filter stopped the reply"]'
}

# config_fails AGENT-JSON STDERR-LINE: the turn on that agent fails at
# once with that line, code config, and never parks.
config_fails() {
	agent bad "$1"
	ring -a bad -m hi
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == *"agentrt-session: turn failed (config): $2"* ]] ||
	    fail "no '$2' in: $output"
	assert_eq "$(payloads turn.completed | jq -c '.[0] | [.code, .error]')" \
	    "[\"config\",$(jq -Rn --arg e "$2" '$e')]"
	assert_eq "$(payloads session.interrupted)" '[]'
	assert_eq "$(agentrt-session show "$(the_session)" | jq -r .turn_status)" failed
	# One call, not retried.
	assert_eq "$(payloads llm.call.dispatched | jq length)" 1
}

@test "no OPENAI_API_KEY for api.openai.com fails the turn at once, naming it" {
	config_fails '{"model": "openai/gpt-4o"}' \
	    'OPENAI_API_KEY is not set: a call to https://api.openai.com/v1 needs a key (a server of your own: set OPENAI_BASE_URL)'
}

@test "no ANTHROPIC_API_KEY for api.anthropic.com fails the turn the same way" {
	config_fails '{"model": "anthropic/claude-sonnet-4"}' \
	    'ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN): a call to https://api.anthropic.com needs a key (a server of your own: set ANTHROPIC_BASE_URL)'
}

@test "a model that is not provider/name fails the turn" {
	config_fails '{"model": "gpt-4o"}' "model 'gpt-4o' is not provider/name"
}

@test "an unknown provider fails the turn" {
	config_fails '{"model": "nosuch/x"}' "unknown provider 'nosuch' in model 'nosuch/x'"
}

@test "mock/script with no script fails the turn" {
	config_fails '{"model": "mock/script"}' \
	    'mock/script has no script: set mock.script or mock.script_file in the agent, or give --script'
}

@test "a server of one's own goes keyless; a key set is never recorded" {
	agent keyless '{"model": "openai/mock-model"}'
	OPENAI_BASE_URL="$srv/loop/0/v1" ring -a keyless -m hi
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c '.headers | has("authorization")' "$srv_log")" false
	rm -rf "$AGENTRT_DB"
	OPENAI_API_KEY=sk-proj-SENTINELsecret0000000000000000 \
	    ring -a keyless -m hi
	! grep -rq SENTINELsecret "$AGENTRT_DB" "$EVENTS" \
	    "$BATS_TEST_TMPDIR/stages.err" || false
	[[ "$output" != *SENTINELsecret* ]]
}
