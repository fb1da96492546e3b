#!/usr/bin/env bats
# The seed: a worker that returns the proposal it was given is the
# standard agent.  The same turns run with plain agentrt-decide and with
# a worker that echoes every whole proposal must send the same model
# requests: the prior_turns window, an autonomous agent's plan and step
# text, and the bodies a provider receives.

load lib

export T=$BATS_TEST_TMPDIR AGENTRT_CLOCK=2026-01-01T00:00:00Z

# An echoing worker: .proposed as it came, the execute triggers left to
# the later stages; what it was sent is kept in $T/seen.
setup() {
	# (The worker's environment is agentrt-decide's, which keeps few
	# variables: the path is written in.)
	printf '#!/bin/sh\ntee -a "%s" |\n' "$T/seen" >"$T/echo.sh"
	cat >>"$T/echo.sh" <<'SH'
exec jq -c --unbuffered 'if .trigger.type == "tool.execute" or
    .trigger.type == "llm.execute" then null else .proposed end'
SH
	chmod +x "$T/echo.sh"
}

# turns NAME AGENT MESSAGE...: one session, a turn per MESSAGE, on a
# store of its own, every model request recorded in $T/NAME.tape; with
# ECHO set, decide runs the echoing worker.  The clock is frozen and the
# n-th turn's ids come of seed n, so both runs name their messages alike.
turns() {
	local name=$1 agent=$2 m sid= n=0
	shift 2
	export AGENTRT_DB="$T/db-$name"
	LLM_ARGS="--record $T/$name.tape"
	DECIDE=${ECHO:+--exec $T/echo.sh}
	for m in "$@"; do
		export AGENTRT_ID_SEED=$((n += 1))
		if [ -z "$sid" ]; then
			ring -a "$agent" -m "$m"
		else
			ring -s "$sid" -a "$agent" -m "$m"
		fi
		[ "$status" -eq 0 ] || fail "$name: status $status: $output"
		sid=$(the_session)
	done
}

@test "prior_turns: the echoing worker's model requests are the default's" {
	turns plain lim-prior one two three
	ECHO=1 turns echo lim-prior one two three
	# The window is cut in both: the system prompt, then the last turn
	# before this one and this one.
	assert_eq "$(jq -c '.request.messages | map(.content)' \
	    "$T/plain.tape" | tail -1)" '["Repeat.","two","two","three"]'
	assert_eq "$(wc -l <"$T/echo.tape")" 3
	diff <(jq -c .request "$T/plain.tape") <(jq -c .request "$T/echo.tape") ||
	    fail "the echoing worker's requests differ"
	# What the worker was sent is that prompt: the whole proposal's
	# llm.call is windowed as the call the engine makes.
	assert_eq "$(jq -c 'select(.trigger.type == "client.messages") |
	    .proposed.actions[] | select(.type == "llm.call") |
	    .messages | map(.content)' "$T/seen" | tail -1)" \
	    '["Repeat.","two","two","three"]'
	[ "$(grep -c . "$T/seen")" -ge 3 ]
}

@test "autonomous: the echoed plan and step calls carry the plan's text" {
	turns plain auto-echo 'add 1 and 2'
	ECHO=1 turns echo auto-echo 'add 1 and 2'
	assert_eq "$(wc -l <"$T/plain.tape")" 3
	# The planning call asks for a plan; the steps carry it, each with
	# its todo as the step goal and todo_done among the tools.
	assert_eq "$(jq -c '[.request.step_goal, (.request.messages[0].content |
	    test("^Work through it\\.\n\n")), ([.request.tools[]?.name] |
	    index("todo_done") != null)]' "$T/plain.tape" | tr -d '\n')" \
	    '["decompose goal into todo plan",true,false]["add them",true,true]["check it",true,true]'
	diff <(jq -c .request "$T/plain.tape") <(jq -c .request "$T/echo.tape") ||
	    fail "the echoing worker's requests differ"
}

@test "over HTTP: the bodies an OpenAI server receives are the same" {
	start_server
	local name
	for name in plain echo; do
		: >"$srv_log"
		OPENAI_BASE_URL="$srv/loop/3/v1" \
		OPENAI_API_KEY=sk-echo-test-key-000111222333 \
		ECHO=$([ $name = echo ] && echo 1) turns "$name" http-openai 'add it up'
		jq -c .body "$srv_log" >"$T/$name.bodies"
	done
	stop_server
	assert_eq "$(wc -l <"$T/echo.bodies")" 4
	diff "$T/plain.bodies" "$T/echo.bodies" || fail "the bodies differ"
}
