#!/usr/bin/env bats
# guard-tool: issue 17's tool side in whole rings and agent files: the
# allow-list agentrt-tool keeps whatever a decision stage does, variables
# passed through to tools and never a provider key, and the agent-file
# checks agentrt-session run makes

load lib

setup() {
	agents=$BATS_TEST_TMPDIR/agents
	tools=$BATS_TEST_TMPDIR/tools
	events=$BATS_TEST_TMPDIR/events
	stages=$BATS_TEST_TMPDIR/stages.err
	mkdir -p "$agents" "$tools"
	# Only a mock model runs, so no key is needed: one is set anyway, a
	# sentinel that must reach no tool.
	export OPENAI_API_KEY=sk-proj-SENTINELsecret0000000000000000
	export ANTHROPIC_AUTH_TOKEN=SENTINEL-auth-token
}

# agent NAME JSON: the agent file NAME.json.
agent() {
	printf '%s\n' "$2" >"$agents/$1.json"
}

# tool NAME: the script on stdin becomes the executable tool NAME.
tool() {
	cat >"$tools/$1"
	chmod +x "$tools/$1"
}

# ring RUN-ARGS...: a ring of the four stages, agentrt-decide given
# $DECIDE (default: none, so it takes each proposal), over a fifo; the
# stages' stderr in $stages, the client events in $events.
ring() {
	local fifo=$BATS_TEST_TMPDIR/ring

	rm -f "$fifo"
	mkfifo "$fifo"
	export DECIDE="${DECIDE:-}" TOOL_ARGS="${TOOL_ARGS:-}"
	run timeout 60 bash -c '
		fifo=$1 tools=$2 agents=$3 events=$4 stages=$5; shift 5
		if [ -n "$DECIDE" ]; then
			agentrt-decide --jq "$DECIDE" <"$fifo" 2>>"$stages"
		else
			agentrt-decide <"$fifo" 2>>"$stages"
		fi |
		agentrt-llm 2>>"$stages" |
		agentrt-tool -t "$tools" $TOOL_ARGS 2>>"$stages" |
		agentrt-session run --agents "$agents" --events "$events" "$@" \
		    >"$fifo"' ring "$fifo" "$tools" "$agents" "$events" \
	    "$stages" "$@"
}

# The completion's text, as JSON.
completion() {
	jq -c 'select(.type == "completion") | .text' "$events"
}

# A policy that takes every proposal but passes tool.execute on to the
# tool stage, so the proposal's own unknown-tool answer is skipped.
PASS_TOOLS='if .trigger.type == "tool.execute" then empty else .proposed end'

@test "a policy that passes tool.execute on cannot run a tool the agent does not declare" {
	printf '#!/bin/sh\ntouch "%s/ran"\necho pwned\n' "$BATS_TEST_TMPDIR" |
	    tool evil
	agent sneaky '{"model": "mock/script",
	    "tools": [{"name": "calc", "description": "calculates"}],
	    "mock": {"script": [
	        {"tool_calls": [{"name": "evil", "arguments": {}}]},
	        {"content": "the tool said: {{tool}}"}]}}'
	DECIDE=$PASS_TOOLS ring -a sneaky -m go
	[ "$status" -eq 0 ] || fail "status $status: $output $(cat "$stages")"
	[ ! -e "$BATS_TEST_TMPDIR/ran" ] || fail "the undeclared tool ran"
	assert_eq "$(completion)" '"the tool said: unknown tool: evil"'
	grep -qx "agentrt-tool: <stdin>:[0-9]*: refused tool 'evil': the agent does not declare it" \
	    "$stages" || fail "$(cat "$stages")"
	# The session recorded the refusal with its code.
	agentrt-session log "$(agentrt-session ls -q)" >"$BATS_TEST_TMPDIR/log"
	assert_eq "$(jq -c 'select(.payload.type == "tool.call.errored") | .payload | [.error, .code]' \
	    "$BATS_TEST_TMPDIR/log")" '["unknown tool: evil","unknown_tool"]'
}

@test "a declared tool in a ring gets the variables its declaration names, never a key" {
	printf '#!/bin/sh\necho "mem=$MEMORY_FILE_PATH other=$OTHER key=$OPENAI_API_KEY$ANTHROPIC_AUTH_TOKEN"\n' |
	    tool mem
	agent keeper '{"model": "mock/script",
	    "tools": [{"name": "mem", "description": "memory",
	               "env": ["MEMORY_FILE_PATH"]}],
	    "mock": {"script": [
	        {"tool_calls": [{"name": "mem", "arguments": {}}]},
	        {"content": "{{tool}}"}]}}'
	export MEMORY_FILE_PATH=/var/mem.json OTHER=other
	ring -a keeper -m go
	[ "$status" -eq 0 ] || fail "status $status: $output $(cat "$stages")"
	assert_eq "$(completion)" '"mem=/var/mem.json other= key="'
	# --env adds to it, for every tool.
	TOOL_ARGS="--env OTHER" ring -a keeper -m again
	[ "$status" -eq 0 ] || fail "status $status: $output $(cat "$stages")"
	assert_eq "$(completion | tail -1)" '"mem=/var/mem.json other=other key="'
	! grep -rq SENTINEL "$events" "$AGENTRT_DB" || fail "a key reached the store"
}

@test "an agent file declaring a provider key in a tool's env is refused when loaded" {
	agent leaky '{"model": "mock/echo",
	    "tools": [{"name": "mem", "env": ["OPENAI_API_KEY"]}]}'
	run agentrt-session run --agents "$agents" -a leaky -m hi </dev/null
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: agent '$agents/leaky.json': tool 'mem': env: 'OPENAI_API_KEY': a provider key is never passed to a tool"
	assert_eq "$(agentrt-session ls -q)" ""
	# The same in the declaration file beside a tool named alone.
	printf '#!/bin/sh\necho\n' | tool mem
	echo '{"env": ["ANTHROPIC_AUTH_TOKEN"]}' >"$tools/mem.json"
	agent leaky '{"model": "mock/echo", "tools": ["mem"]}'
	run agentrt-session run --agents "$agents" --tools "$tools" -a leaky -m hi </dev/null
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: agent 'leaky': tool 'mem' (its declaration file): env: 'ANTHROPIC_AUTH_TOKEN': a provider key is never passed to a tool"
}

@test "a limit of the wrong type fails the run with one line, as a bad agent does" {
	agent costly '{"model": "mock/echo", "max_turn_cost": 0.5}'
	run agentrt-session run --agents "$agents" -a costly -m hi </dev/null
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: agent '$agents/costly.json': field 'max_turn_cost': expected a decimal string such as \"0.50\" (quote the number), not 0.5"
	agent loopy '{"model": "mock/echo", "max_loops": 0}'
	run agentrt-session run --agents "$agents" -a loopy -m hi </dev/null
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: agent '$agents/loopy.json': field 'max_loops': expected a positive integer, not 0"
	assert_eq "$(agentrt-session ls -q)" ""
}

@test "an unknown key in an agent file is a warning naming the nearest known key" {
	agent typo '{"model": "mock/echo", "tols": [], "max_loop": 2, "zzzzzzzz": 1}'
	ring -a typo -m hi
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(grep -c 'unknown key' <<<"$output")" 3
	[[ "$output" == *"agentrt-session: agent 'typo': unknown key 'tols' (did you mean 'tools'?)"* ]]
	[[ "$output" == *"agentrt-session: agent 'typo': unknown key 'max_loop' (did you mean 'max_loops'?)"* ]]
	# Nothing near it: no guess, the line ends there.
	grep -qxF "agentrt-session: agent 'typo': unknown key 'zzzzzzzz'" <<<"$output" || fail "$output"
	# It is a warning: the turn ran.
	assert_eq "$(completion)" '"hi"'
}

@test "every example agent and every agent file the tests use loads with no warning" {
	local f n dir count=0
	for f in "$top_srcdir"/examples/agents/*.json \
	    "$top_srcdir"/tests/fixtures/agents/*.json \
	    "$top_srcdir"/tests/fixtures/byref/loop3.json; do
		n=$(basename "$f" .json)
		dir=$(dirname "$f")
		run agentrt-session run --agents "$dir" \
		    --tools "$top_srcdir/examples/tools" \
		    --tools "$top_srcdir/tests/fixtures/tools" -a "$n" </dev/null
		# With no ring it writes the first decision and says so.
		[[ "$output" == *"the ring closed with session"* ]] ||
		    fail "$f did not load: $output"
		! grep -q 'unknown key' <<<"$output" || fail "$f: $output"
		count=$((count + 1))
	done
	[ "$count" -gt 30 ]
}

@test "agentrt-shell --tool-env hands the variable to its tool stage" {
	printf '#!/bin/sh\necho "mem=$MEMORY_FILE_PATH key=$OPENAI_API_KEY"\n' |
	    tool mem
	agent keeper '{"model": "mock/script",
	    "tools": [{"name": "mem", "description": "memory"}],
	    "mock": {"script": [
	        {"tool_calls": [{"name": "mem", "arguments": {}}]},
	        {"content": "{{tool}}"}]}}'
	export MEMORY_FILE_PATH=/var/mem.json
	run agentrt-shell --agents "$agents" --tools "$tools" -a keeper -c go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$output" "mem= key="
	run agentrt-shell --agents "$agents" --tools "$tools" \
	    --tool-env MEMORY_FILE_PATH -a keeper -c go
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$output" "mem=/var/mem.json key="
	run agentrt-shell --tool-env OPENAI_API_KEY -a keeper -c go
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-shell: bad --tool-env: 'OPENAI_API_KEY': a provider key is never passed to a tool"
}

@test "--env reaches an MCP server; a provider key does not" {
	local js=${MCP_SERVER_JS:-}
	command -v node >/dev/null || skip "no node on this machine"
	node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' ||
	    skip "node $(node --version) is older than 20, which the server needs"
	[ -n "$js" ] && [ -f "$js" ] || skip "the MCP server is not installed (make mcp-server)"
	export MEMORY_FILE_PATH=/var/mem.json
	line='{"type":"decision.request","session_id":"s1","decision_id":"d1","trigger":{"type":"tool.execute","id":"c1","name":"ev__get-env","arguments":"{}","attempt":1}}'
	run bash -c 'printf "%s\n" "$1" | agentrt-tool -t "$2" --mcp "ev=node $3 stdio" --env MEMORY_FILE_PATH' \
	    x "$line" "$tools" "$js"
	[ "$status" -eq 0 ] || fail "$output"
	env=$(jq -r 'select(.type == "tool.result") | .result' <<<"$output")
	assert_eq "$(jq -r .MEMORY_FILE_PATH <<<"$env")" /var/mem.json
	[[ "$output" != *SENTINEL* ]] || fail "a key reached the server"
	run bash -c 'printf "%s\n" "$1" | agentrt-tool -t "$2" --mcp "ev=node $3 stdio"' \
	    x "$line" "$tools" "$js"
	env=$(jq -r 'select(.type == "tool.result") | .result' <<<"$output")
	assert_eq "$(jq -r .MEMORY_FILE_PATH <<<"$env")" null
}
