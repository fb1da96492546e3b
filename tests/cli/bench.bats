#!/usr/bin/env bats
# bench.bats - the benchmark scripts start, say how to run them, and run:
# each for a tiny K against the benchmarks' own mock server, bench/mockllm.py.
# Only their output's shape is checked, never a timing.

load lib

bench=$top_srcdir/bench

# needs CMD...: skip, saying which, when a command a benchmark needs is not
# installed.
needs() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c is not installed"
	done
	[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
}

@test "every bench script prints its help with -h and --help, and refuses a bad option" {
	local s
	for s in ring.sh llm.sh portable.sh compare.sh fsync-exec.sh bus.sh; do
		for h in -h --help; do
			run "$bench/$s" "$h"
			[ "$status" -eq 0 ] || fail "$s $h: exit $status: $output"
			[[ $output == *"usage: bench/$s"* ]] || fail "$s $h: $output"
		done
		run "$bench/$s" -Z
		[ "$status" -eq 2 ] || fail "$s -Z: exit $status"
	done
	for s in mockllm.py tap.py; do
		run python3 "$bench/$s" -h
		[ "$status" -eq 0 ] || fail "$s -h: exit $status: $output"
		[[ ${lines[0]} == "$s "* ]] || fail "$s -h: $output"
	done
	run python3 "$bench/mockllm.py" notaport
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "mockllm: bad PORT 'notaport': expected a number" ]]
}

@test "ring.sh: -h is help, not the HTTP mode it used to be" {
	run "$bench/ring.sh" -h -k 1
	[ "$status" -eq 0 ]
	[[ $output == *"-H, --http"* ]]
	[[ $output != *wall_ms* ]]
}

# mock K [LATENCY_MS]: start bench/mockllm.py with K steps on a free port;
# sets url.  The server goes when the test does.
mock() {
	local port_file=$BATS_TEST_TMPDIR/mock.err i
	: >"$port_file"	# before sed reads it: the job opens it when it runs
	MOCKLLM_LATENCY_MS=${2:-0} python3 "$bench/mockllm.py" 0 "$1" \
	    2>"$port_file" 3>&- &
	mock_pid=$!
	for i in $(seq 100); do
		url=$(sed -n 's|^mockllm: \(http://[^ ]*\) K=.*|\1|p' "$port_file")
		[ -n "$url" ] && return 0
		sleep 0.05
	done
	fail "mockllm.py did not start: $(cat "$port_file")"
}

teardown() {
	[ -z "${mock_pid:-}" ] || kill "$mock_pid" 2>/dev/null || true
}

@test "mockllm.py answers chat completions, plain and streamed, as a K-step tool loop" {
	needs curl
	MOCKLLM_LATENCY_MS=1 mock 1
	chat() {
		curl -sf -H 'Content-Type: application/json' \
		    --data-binary "$1" "$url/chat/completions"
	}
	run chat '{"model":"m","messages":[{"role":"user","content":"go"}]}'
	[ "$status" -eq 0 ]
	assert_eq "$(jq -c '.choices[0].message.tool_calls[0].function | [.name, (.arguments | fromjson)]' <<<"$output")" \
	    '["add",{"a":0,"b":1}]'
	run chat '{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"add","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"}]}'
	assert_eq "$(jq -r '.choices[0].message.content' <<<"$output")" "done after 1 steps"
	run chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"go"},{"role":"tool","tool_call_id":"c","content":"1"}]}'
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "data: [DONE]" ]
	assert_eq "$(sed -n 's/^data: {/{/p' <<<"$output" | jq -j '.choices[0].delta.content // empty')" \
	    "done after 1 steps"
	assert_eq "$(curl -sf "$url/../mock/stats" | jq -c '[.chat_requests, .streamed, .tool_calls, .finals]')" '[3,1,1,2]'
}

@test "ring.sh runs a tiny K over the mock model and prints its table" {
	needs jq
	run "$bench/ring.sh" -b "$top_builddir" -k 1 -k 2 -r 1
	[ "$status" -eq 0 ] || fail "$output"
	[[ ${lines[0]} == 'tool       K    wall_ms '* ]]
	assert_eq "$(awk 'NR > 1 { print $1, $2 }' <<<"$output" | paste -sd,)" \
	    "jq 1,jq 2,noop 1,noop 2"
}

@test "ring.sh --http runs a tiny K against bench/mockllm.py, plain and streamed" {
	needs jq curl python3
	run "$bench/ring.sh" --http -b "$top_builddir" -k 1 -r 1
	[ "$status" -eq 0 ] || fail "$output"
	[[ ${lines[0]} == 'mode       K  wall_ms '* ]]
	assert_eq "$(awk 'NR > 1 { print $1, $2 }' <<<"$output" | paste -sd,)" \
	    "plain 1,stream 1"
}

@test "llm.sh runs agentrt-llm against bench/mockllm.py and prints both parts" {
	needs curl python3
	run "$bench/llm.sh" -b "$top_builddir" -n 1 -r 1 -s 2 -c 0 -l 1
	[ "$status" -eq 0 ] || fail "$output"
	[[ ${lines[0]} == "agentrt-llm against mockllm.py"* ]]
	[[ $output == *$'\n    1 '* ]] || fail "no row for N = 1: $output"
	assert_eq "$(awk '($1 == "stream" || $1 == "plain") && $2 ~ /^[0-9]+$/ { print $1, $2 }' <<<"$output" | paste -sd,)" \
	    "stream 10,plain 0"
	[[ ${lines[-1]} == "stream - plain: "*" us of CPU per delta line (5.0 delta lines a call)" ]]
}

@test "bus.sh runs both parts over a real nats-server and prints their tables" {
	command -v nats-server >/dev/null || skip "nats-server is not installed"
	run "$bench/bus.sh" -b "$top_builddir" -w 1 -w 2 -s 2 -l 10 -k 2 -k 3 -r 1
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	[[ $output == *"1. capacity: 2 one-step turns"* ]] || fail "$output"
	[ "$(grep -cE '^[12] +[0-9]+ +[0-9.]+ +[0-9.]+x$' <<<"$output")" -eq 2 ] || fail "$output"
	# One row a K: the times, and the server took messages and bytes.
	[ "$(grep -cE '^[23] +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +-?[0-9.]+ +[1-9][0-9.]* +[1-9][0-9]*$' <<<"$output")" -eq 2 ] ||
	    fail "$output"
}
