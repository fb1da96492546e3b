#!/usr/bin/env bats
# Structured answers on whole rings: an agent with "answer": "structured"
# asks each model for the seed's StructuredAnswerEvent shape, the engine
# checks the reply against its schema, holds it to the seed's caps, and
# clients get one structured_answer event whose summary is the turn's
# text.  The mock, and OpenAI's and Anthropic's wire from fixtures.

load lib

setup() {
	# The example agents name their tools; the engine reads them here.
	export AGENTRT_TOOLS="$top_srcdir/examples/tools"
}

teardown() {
	stop_server 2>/dev/null || true
}

completion() {
	events "select(.type==\"completion\") | .$1" | tail -1
}

answer() {
	events "select(.type==\"structured_answer\") | $1"
}

# sa_agent NAME JQ: an agent file NAME made from analyst by the jq edit.
sa_agent() {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	jq "$2" "$top_srcdir/examples/agents/analyst.json" >"$BATS_TEST_TMPDIR/agents/$1.json"
}

@test "analyst: one structured_answer event, the summary as the turn's text, the table in the message" {
	ring -a analyst -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(answer '.summary')" '"17*23 is 391."'
	assert_eq "$(answer '[.columns, .rows[0].cells, .rows[1].cells]' | jq -c .)" \
	    '[["expression","value"],["17*23","391"],["17+23","40"]]'
	assert_eq "$(answer '.note')" '"Worked out with the calc tool."'
	assert_eq "$(answer '.followups | length')" 2
	assert_eq "$(events 'select(.type=="structured_answer")' | wc -l)" 1
	assert_eq "$(completion text)" '"17*23 is 391."'
	# The answer's event names the message that holds it.
	assert_eq "$(answer .id)" "$(events 'select(.type=="message" and .message.role=="assistant") | .message.id' | tail -1)"
	# Every model call asked for the answer's format.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested") | .request.response_format.name] | unique')" \
	    '["structured_answer"]'
	# No warning: nothing was over a cap.
	assert_eq "$(events 'select(.type=="warning")' | wc -l)" 0
	# Exported as Markdown, the answer is a table.
	run agentrt-tree export --format markdown "$(the_session)"
	[[ "$output" == *"| expression | value |"* ]] || fail "no table: $output"
}

@test "an answer that fails the schema is asked for once more; the mended one is kept" {
	ring -a sa-bad -m 'answer me'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(answer .summary)" '"mended"'
	assert_eq "$(completion text)" '"mended"'
	# Two calls: the second carried the first reply and what was wrong.
	assert_eq "$(log_of '[.[].payload | select(.type=="llm.call.requested")] | length')" 2
	log_of '.[].payload | select(.type=="llm.call.requested") | .request.messages[-1].content' |
	    grep -q 'does not fit the structured_answer schema' || fail "no correction sent"
	# Only the mended answer joined the conversation.
	assert_eq "$(agentrt-tree path "$(the_session)" | jq -s -c '[.[] | select(.role=="assistant") | .content]')" \
	    '["{\"summary\":\"mended\",\"rows\":[{\"cells\":[\"1\"]}]}"]'
	assert_eq "$(events 'select(.type=="warning")' | wc -l)" 0
}

@test "an answer that fails twice is delivered as plain text, with a warning" {
	ring -a sa-bad-twice -m 'answer me'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="structured_answer")' | wc -l)" 0
	assert_eq "$(events 'select(.type=="warning") | .code')" '"answer_invalid"'
	events 'select(.type=="warning") | .message' | grep -q 'delivered as plain text' || fail "no why"
	assert_eq "$(completion text)" '"{\"summary\":7}"'
}

@test "caps: a part over its cap is dropped with a warning, the rest flows" {
	sa_agent over '.mock.script[1].json.followups = [range(9) | "f\(.)"] |
	    .mock.script[1].json.note = ("n" * 2049)'
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a over -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(answer '.followups | length')" 8
	assert_eq "$(answer '.note')" null
	assert_eq "$(answer '.summary')" '"17*23 is 391."'
	assert_eq "$(events 'select(.type=="warning") | "\(.code) \(.part)"' | tr -d '"' | sort | tr '\n' ' ')" \
	    'answer_cap followups answer_cap note '
	# At the cap, nothing is dropped.
	sa_agent at '.mock.script[1].json.followups = [range(8) | "f\(.)"] |
	    .mock.script[1].json.note = ("n" * 2048)'
	rm -f "$EVENTS"
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a at -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(answer '[(.followups | length), (.note | length)]' | jq -c .)" '[8,2048]'
	assert_eq "$(events 'select(.type=="warning")' | wc -l)" 0
}

@test "a message whose structured_answer is not the seed's shape is not shown as one" {
	local view
	view=$(jq -nc '{type: "client.messages", agent_id: "echo", messages: [
	    {role: "user", content: "hi"},
	    {role: "assistant", content: "x", structured_answer: {summary: "s", columns: [1]}},
	    {role: "user", content: "again"}]}')
	ring -a echo --input "$view"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events 'select(.type=="structured_answer")' | wc -l)" 0
	events 'select(.type=="warning" and .code=="answer_invalid") | .message' |
	    grep -q 'not shown' || fail "no warning: $(cat "$EVENTS")"
}

@test "agentrt-shell draws the answer as an aligned table with numbered follow-ups" {
	run agentrt-shell --agents "$top_srcdir/examples/agents" \
	    --tools "$top_srcdir/examples/tools" -a analyst -c 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	[[ "$output" == *"17*23 is 391."* ]] || fail "no summary: $output"
	echo "$output" | grep -Eq '^ *expression +value *$' || fail "no header: $output"
	echo "$output" | grep -Eq '^ *17\*23 +391 *$' || fail "no row: $output"
	[[ "$output" == *"/1 What is 17*24?"* ]] || fail "no follow-up: $output"
	# The raw JSON is not shown.
	[[ "$output" != *'"summary"'* ]] || fail "raw JSON shown: $output"
}

# provider_agent NAME BASE: http-BASE's agent asking for structured answers,
# without tools (so Anthropic's answer tool is forced by name).
provider_agent() {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	jq '.answer = "structured" | del(.tools)' \
	    "$top_srcdir/tests/fixtures/agents/http-$2.json" >"$BATS_TEST_TMPDIR/agents/$1.json"
}

@test "OpenAI: response_format json_schema goes out, the fixture's JSON content is the answer" {
	start_server
	provider_agent sa-openai openai
	OPENAI_BASE_URL="$srv/fixture/openai/chat-nonstream-structured-answer.json/v1" \
	OPENAI_API_KEY=sk-sentinel-structured \
	AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a sa-openai -m 'weather in Paris and Oslo'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(jq -c 'select(.path | endswith("/chat/completions")) | .body.response_format | [.type, .json_schema.name, .json_schema.schema.required]' "$srv_log")" \
	    '["json_schema","structured_answer",["summary"]]'
	assert_eq "$(answer .summary)" '"Paris is 18C and sunny; Oslo is 4C with rain."'
	assert_eq "$(answer '.rows[1].cells' | jq -c .)" '["Oslo","4C, rain"]'
	assert_eq "$(completion text)" '"Paris is 18C and sunny; Oslo is 4C with rain."'
}

@test "Anthropic: a forced tool goes out, its input is the answer, streamed or not" {
	start_server
	provider_agent sa-anthropic anthropic
	for f in messages-nonstream-structured-answer.json messages-stream-structured-answer.sse; do
		rm -f "$EVENTS"
		jq --arg s "$([ "${f##*.}" = sse ] && echo true || echo false)" '.stream = ($s == "true")' \
		    "$BATS_TEST_TMPDIR/agents/sa-anthropic.json" >"$BATS_TEST_TMPDIR/agents/sa-a.json"
		ANTHROPIC_BASE_URL="$srv/fixture/anthropic/$f" \
		ANTHROPIC_API_KEY=sk-ant-sentinel-structured \
		AGENTS="$BATS_TEST_TMPDIR/agents:$AGENTS" ring -a sa-a -m 'weather in Paris and Oslo'
		[ "$status" -eq 0 ] || fail "$f: status $status: $output"
		assert_eq "$(jq -c 'select(.path | endswith("/messages")) | [.body.tool_choice, [.body.tools[].name]]' "$srv_log" | tail -1)" \
		    '[{"type":"tool","name":"structured_answer"},["structured_answer"]]'
		assert_eq "$(answer .summary)" '"Paris is 18C and sunny; Oslo is 4C with rain."'
		assert_eq "$(answer '.columns' | jq -c .)" '["city","weather"]'
		# The answer is the reply's text, not a tool call.
		assert_eq "$(events 'select(.type=="tool_call")' | wc -l)" 0
	done
}
