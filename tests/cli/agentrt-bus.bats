#!/usr/bin/env bats
# agentrt-bus against one real nats-server on a loopback port: what pub
# does with a line the server will not take, or cannot route, and the
# usage errors that need no server.

load lib

# nats_start [CONF-LINE...]: one JetStream server on free ports, its
# config lines added; exports NATS_URL and sets MON (its monitoring
# base).  Skips, saying so, without nats-server.
nats_start() {
	command -v nats-server >/dev/null ||
	    skip "nats-server is not installed (CI installs Debian's package)"
	local d=$BATS_TEST_TMPDIR/nats i port mport
	read -r port mport < <(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
	mkdir -p "$d"
	printf '%s\n' "listen: 127.0.0.1:$port" "http: 127.0.0.1:$mport" \
	    "jetstream { store_dir: \"$d/js\" }" "$@" >"$d/conf"
	nats-server -c "$d/conf" >"$d/log" 2>&1 &
	echo $! >"$d/pid"
	export NATS_URL=nats://127.0.0.1:$port
	MON=http://127.0.0.1:$mport
	for i in $(seq 1 100); do
		curl -sf "$MON/healthz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "nats-server did not start: $(cat "$d/log")"
}

teardown() {
	local f=$BATS_TEST_TMPDIR/nats/pid
	[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	return 0
}

# A client line of session $1 whose message is $2 bytes of text.
big_line() {
	jq -nc --arg id "$1" --argjson n "$2" '{type: "client.message",
	    session_id: $id, agent_id: "calc", turn_id: ($id + "-t1"),
	    message: {role: "user", content: ([range($n)] | map("x") | add)}}'
}

@test "a line over the server's max_payload: one error line in its place, not retried" {
	nats_start "max_payload: 4096"
	agentrt-bus init >/dev/null
	{ big_line big 8000; big_line small 100; } >"$BATS_TEST_TMPDIR/in"
	run timeout 20 agentrt-bus pub agentrt.engine.s1 <"$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ ${lines[0]} == "agentrt-bus: a client.message of session big cannot go to agentrt.engine.s1: "*" bytes, more than the server takes (max_payload 4096 bytes: raise it in the server's configuration)" ]] ||
	    fail "$output"
	# What went out: the error for big, then small, whole.
	run timeout 20 agentrt-bus sub agentrt.engine.s1 --until client.message
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	[ "${#lines[@]}" -eq 2 ] || fail "$output"
	jq -e 'select(.type == "error") | .code == "too_large" and
	    .session_id == "big" and (.input | startswith("{\"type\""))' \
	    <<<"${lines[0]}" >/dev/null || fail "${lines[0]}"
	jq -e '.session_id == "small" and (.message.content | length) == 100' \
	    <<<"${lines[1]}" >/dev/null || fail "${lines[1]}"
}

@test "pub -d makes a by-reference llm.request whole: the config's tools, no ref" {
	nats_start
	agentrt-bus init >/dev/null
	export AGENTRT_DB=$BATS_TEST_TMPDIR/db
	mkfifo "$BATS_TEST_TMPDIR/ring"
	AGENTRT_AGENTS="$top_srcdir/examples/agents" timeout 60 bash -c '
	    agentrt-decide <"$1/ring" | agentrt-llm | agentrt-tool --tools "$2/examples/tools" |
	    agentrt-session run -a calc -m "What is 17*23?" 2>/dev/null | tee "$1/tap" >"$1/ring"' \
	    ring "$BATS_TEST_TMPDIR" "$top_srcdir"
	line=$(jq -c 'select(.type == "llm.request")' "$BATS_TEST_TMPDIR/tap" | head -1)
	jq -e '(.ref.config | test("^[0-9a-f]{32}$")) and (.request | has("tools") | not)' \
	    <<<"$line" >/dev/null || fail "not by reference: $line"
	run timeout 20 agentrt-bus pub -d "$AGENTRT_DB" agentrt.engine.s1 <<<"$line"
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	run timeout 20 agentrt-bus sub agentrt.engine.s1 --until llm.request
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	assert_eq "$(jq -c '[has("ref"), (.request.tools | map(.name))]' <<<"$output")" '[false,["calc"]]'
	assert_eq "$(jq -c 'del(.request.tools)' <<<"$output")" "$(jq -c 'del(.ref)' <<<"$line")"
}

@test "a line no stream holds the subject of stops pub, naming init" {
	nats_start
	run timeout 20 agentrt-bus pub agentrt.engine.s1 <<<'{"type":"x"}'
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[[ $output == *"no stream holds subject agentrt.engine.s1 (run agentrt-bus init)"* ]] ||
	    fail "$output"
}

@test "no bucket yet: owner fails at once, naming init" {
	nats_start
	run timeout 20 agentrt-bus owner a1 --shards s1,s2
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ $output == "agentrt-bus: owner: the bucket agentrt-owners (run agentrt-bus init): "* ]] ||
	    fail "$output"
}

@test "a line routed by owner, unclaimed and with no --shards, goes to unowned and says why" {
	nats_start
	agentrt-bus init >/dev/null
	run timeout 20 agentrt-bus pub 'agentrt.engine.{owner}' <<<'{"type":"client.message","session_id":"a1","message":{"role":"user","content":"hi"}}'
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	[[ $output == *"no owner for a client.message of session a1: sent to unowned"* ]] ||
	    fail "$output"
	run timeout 20 agentrt-bus sub agentrt.engine.unowned --until client.message
	[ "$status" -eq 0 ] && [ "$(jq -r .session_id <<<"$output")" = a1 ] ||
	    fail "$output"
}

@test "pub with --shards sends an unclaimed session to the shard its id hashes to" {
	nats_start
	agentrt-bus init >/dev/null
	want=$(agentrt-bus owner a1 --shards s1,s2 | jq -r .owner)
	[[ $want == s[12] ]] || fail "$want"
	agentrt-bus pub 'agentrt.engine.{owner}' --shards s1,s2 <<<'{"type":"client.message","session_id":"a1","message":{"role":"user","content":"hi"}}'
	run timeout 20 agentrt-bus sub "agentrt.engine.$want" --until client.message
	[ "$status" -eq 0 ] && [ "$(jq -r .session_id <<<"$output")" = a1 ] ||
	    fail "$output"
	# Claimed for the other shard, the next line follows the claim.
	other=s1
	[ "$want" = s1 ] && other=s2
	agentrt-bus assign a1 "$other" >/dev/null
	agentrt-bus pub 'agentrt.engine.{owner}' --shards s1,s2 <<<'{"type":"client.message","session_id":"a1","turn_id":"t2","message":{"role":"user","content":"again"}}'
	run timeout 20 agentrt-bus sub "agentrt.engine.$other" --until client.message
	[ "$status" -eq 0 ] && [ "$(jq -r .turn_id <<<"$output")" = t2 ] ||
	    fail "$output"
}

@test "usage errors exit 2 and name what is wrong" {
	run agentrt-bus
	[ "$status" -eq 2 ] || fail "exit $status: $output"
	run agentrt-bus bogus
	[ "$status" -eq 2 ] && [[ $output == *"unknown command"* ]] || fail "$output"
	run agentrt-bus pub
	[ "$status" -eq 2 ] && [[ $output == *"pub takes one SUBJECT"* ]] || fail "$output"
	run agentrt-bus owner
	[ "$status" -eq 2 ] && [[ $output == *"owner takes one SESSION"* ]] || fail "$output"
	run agentrt-bus --token-env ART_NO_SUCH_VAR init
	[ "$status" -eq 2 ] && [[ $output == *"--token-env ART_NO_SUCH_VAR: the variable is not set"* ]] ||
	    fail "$output"
	run agentrt-bus --tls-cert x.pem init
	[ "$status" -eq 2 ] && [[ $output == *"--tls-cert and --tls-key go together"* ]] ||
	    fail "$output"
}

@test "a refused login fails at once, and no password or token is in what is said" {
	nats_start 'authorization { token: "right-token-7f3a" }'
	ART_TOK=wrong-token-91c2 run timeout 20 agentrt-bus --token-env ART_TOK init
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[[ $output == *"connect to NATS"* ]] || fail "$output"
	[[ $output != *"wrong-token-91c2"* && $output != *"right-token-7f3a"* ]] ||
	    fail "a token in: $output"
	url=${NATS_URL/nats:\/\//nats://bob:hunter2-e8d1@}
	run timeout 20 agentrt-bus --server "$url" init
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[[ $output == *"bob:***@127.0.0.1"* ]] || fail "$output"
	[[ $output != *"hunter2-e8d1"* ]] || fail "a password in: $output"
	# The right token works, and is in nothing it prints either.
	ART_TOK=right-token-7f3a run timeout 20 agentrt-bus --token-env ART_TOK init
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	[[ $output != *"right-token-7f3a"* ]] || fail "$output"
}

@test "credentials or TLS files that cannot be read fail at once, naming them" {
	nats_start
	run timeout 20 agentrt-bus --creds "$BATS_TEST_TMPDIR/none.creds" init
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[ "$output" = "agentrt-bus: --creds '$BATS_TEST_TMPDIR/none.creds': No such file or directory" ] ||
	    fail "$output"
	run timeout 20 agentrt-bus --tls-ca "$BATS_TEST_TMPDIR/none.pem" init
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[[ $output == *"none.pem"* ]] || fail "$output"
}

@test "TLS: a server's certificate trusted with --tls-ca connects; one not trusted fails at once" {
	command -v openssl >/dev/null || skip "no openssl to make a certificate"
	local d=$BATS_TEST_TMPDIR/tls
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" \
	    -out "$d/cert.pem" -days 2 -subj /CN=127.0.0.1 \
	    -addext subjectAltName=IP:127.0.0.1 2>/dev/null
	nats_start "tls { cert_file: \"$d/cert.pem\", key_file: \"$d/key.pem\" }"
	url=${NATS_URL/nats:/tls:}
	run timeout 20 agentrt-bus --server "$url" --tls-ca "$d/cert.pem" init
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	[ "$(jq -s length <<<"$output")" -eq 4 ] || fail "$output"
	run timeout 20 agentrt-bus --server "$url" init
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[[ $output == *"SSL handshake error"*"self-signed certificate"* ]] ||
	    fail "$output"
}

@test "--completions: the commands, and a command's own options" {
	run agentrt-bus --completions
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | awk -F '\t' '!/^-/ { print $1 }' |
	    tr '\n' ' ')" = "init pub sub assign owner " ] || fail "$output"
	run agentrt-bus --completions init
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -f1 | tr '\n' ' ')" = \
	    "--server --creds --token-env --tls-ca --tls-cert --tls-key --replicas --events-max-age --help --version " ] ||
	    fail "$output"
	run agentrt-bus --completions bogus
	[ "$status" -eq 2 ] && [[ $output == *"unknown command 'bogus'"* ]] ||
	    fail "$output"
}
