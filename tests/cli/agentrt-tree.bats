#!/usr/bin/env bats
# agentrt-tree.bats - show, path, branches, diff and export of a message tree

load lib

# The ids the tree of build_tree gets: the clock is pinned, and each run
# has an id seed of its own.
U1=019b76da-a800-76c8-a758-664971b7c553	# user "hello" (a root)
A1=019b76da-a800-76c9-9b24-faf73bfbc368	# assistant "hello"
U2=019b76da-a800-7055-b682-9a8fdb6dd758	# user "second"
A2=019b76da-a800-7056-8b0f-fd9c12e94844	# assistant "second"
R1=019b76da-a800-7137-8cd1-4e68f139c50b	# assistant "regenerated", under U1
U3=019b76da-a800-7138-a80e-7497c82767c9	# user "third"
A3=019b76da-a800-7139-934e-4b65198c1ae1	# assistant "third"
U4=019b76da-a800-76eb-800d-f993facf2d5f	# user "fresh start" (a root)
A4=019b76da-a800-76ec-a7d2-cdad088c87e9	# assistant "fresh start", the head

# run_ring SEED ARGS...: one agentrt-session run on a ring of the mock model.
run_ring() {
	local seed=$1 fifo=$BATS_TEST_TMPDIR/ring
	shift
	rm -f "$fifo"
	mkfifo "$fifo"
	agentrt-decide <"$fifo" | agentrt-llm | agentrt-tool |
	    AGENTRT_ID_SEED=$seed agentrt-session run \
	    --agents "$BATS_TEST_TMPDIR/agents" "$@" >"$fifo"
}

# view JSON-MESSAGES: a client.messages line.
view() {
	jq -c '{type: "client.messages", messages: .}' <<<"$1"
}

# Session s1: a turn, a turn after it, a fork at the first message (a
# client-written reply and a new turn under it), and a view with no shared
# prefix, which starts a second root and leaves the head there.
build_tree() {
	export AGENTRT_CLOCK=2026-01-01T00:00:00Z
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/echo.json"
	run_ring 1 -a echo -s s1 -m hello
	run_ring 2 -s s1 --input "$(view "[
	    {\"id\":\"$U1\",\"role\":\"user\",\"content\":\"hello\"},
	    {\"id\":\"$A1\",\"role\":\"assistant\",\"content\":\"hello\"},
	    {\"role\":\"user\",\"content\":\"second\"}]")"
	run_ring 3 -s s1 --input "$(view "[
	    {\"id\":\"$U1\",\"role\":\"user\",\"content\":\"hello\"},
	    {\"role\":\"assistant\",\"content\":\"regenerated\"},
	    {\"role\":\"user\",\"content\":\"third\"}]")"
	run_ring 4 -s s1 --input "$(view \
	    '[{"role":"user","content":"fresh start"}]')"
	unset AGENTRT_CLOCK
	[ "$(agentrt-session show s1 | jq -c '[.head, .nodes]')" = \
	    "[\"$A4\",9]" ] || fail "the tree is not the one expected"
}

@test "show draws forks, roots and the head, ids abbreviated alike" {
	build_tree
	run agentrt-tree show s1
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(cat <<-'EOF'
	|-* user      019b76da-a800-76c8 hello
	| |-* assistant 019b76da-a800-7137 regenerated
	| | * user      019b76da-a800-7138 third
	| | * assistant 019b76da-a800-7139 third
	| `-* assistant 019b76da-a800-76c9 hello
	|   * user      019b76da-a800-7055 second
	|   * assistant 019b76da-a800-7056 second
	`-* user      019b76da-a800-76eb fresh start
	  * assistant 019b76da-a800-76ec fresh start (head)
	EOF
	)"
}

@test "show shows tool calls and results on one line each" {
	mkfifo "$BATS_TEST_TMPDIR/ring"
	agentrt-decide <"$BATS_TEST_TMPDIR/ring" | agentrt-llm |
	    agentrt-tool -t "$top_srcdir/examples/tools" |
	    agentrt-session run --agents "$top_srcdir/examples/agents" -a calc \
	    -s c -m 'What is
	17*23?' >"$BATS_TEST_TMPDIR/ring"
	run agentrt-tree show c
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[0]} =~ ^\*\ user\ +[0-9a-f-]{8,}\ What\ is\ 17\*23\?$ ]]
	[[ ${lines[1]} == '* assistant '*' → calc({"expr":"17*23"})' ]]
	[[ ${lines[2]} == '* tool      '*' ← 391' ]]
	[[ ${lines[3]} == '* assistant '*' 17*23 = 391 (head)' ]]
}

@test "show --dot writes one node per message, edges, the active path bold" {
	build_tree
	run agentrt-tree show --dot s1
	[ "$status" -eq 0 ]
	assert_eq "${lines[0]}" 'digraph "s1" {'
	assert_eq "${lines[1]}" $'\tnode [shape=box];'
	assert_eq "$(grep -c ' \[label=' <<<"$output")" 9
	assert_eq "$(grep -c ' -> ' <<<"$output")" 7
	assert_eq "$(grep 'style=bold' <<<"$output")" "$(printf '\t%s\n' \
	    "\"$U4\" [label=\"user: fresh start\", style=bold];" \
	    "\"$A4\" [label=\"assistant: fresh start (head)\", style=bold];" \
	    "\"$U4\" -> \"$A4\" [style=bold];")"
	assert_eq "${lines[-1]}" '}'
	grep -qxF "	\"$U1\" -> \"$R1\";" <<<"$output"
}

# A session whose one turn says an arrow, CJK and an emoji, echoed back.
unicode_session() {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/echo.json"
	run_ring 1 -a echo -s u -m "a → b, 漢字 😀"
}

@test "show --dot keeps non-ASCII characters whole" {
	unicode_session
	run agentrt-tree show --dot u
	[ "$status" -eq 0 ]
	[[ $output != *$'\xef\xbf\xbd'* ]] || fail "U+FFFD in: $output"
	assert_eq "$(grep -c '\[label="user: a → b, 漢字 😀"' <<<"$output")" 1
	assert_eq "$(grep -c '\[label="assistant: a → b, 漢字 😀 (head)"' <<<"$output")" 1
}

@test "show --dot output is a graph dot(1) draws, text and all" {
	command -v dot >/dev/null || skip "graphviz is not installed (no dot)"
	unicode_session
	agentrt-tree show --dot u >"$BATS_TEST_TMPDIR/u.dot"
	run dot -Tsvg "$BATS_TEST_TMPDIR/u.dot"
	[ "$status" -eq 0 ]
	assert_eq "$(grep -c '>user: a → b, 漢字 😀</text>' <<<"$output")" 1
}

@test "path prints root to head, or to a node named by id or prefix" {
	build_tree
	run agentrt-tree path s1
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(agentrt-tree path s1 "$A4")"
	assert_eq "$(jq -r .id <<<"$output" | paste -sd' ')" "$U4 $A4"
	run agentrt-tree path s1 019b76da-a800-7056
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(cat <<-EOF
	{"role":"user","content":"hello","id":"$U1"}
	{"id":"$A1","role":"assistant","content":"hello"}
	{"role":"user","content":"second","id":"$U2"}
	{"id":"$A2","role":"assistant","content":"second"}
	EOF
	)"
	run agentrt-tree path s1 "$U1"
	assert_eq "$output" "{\"role\":\"user\",\"content\":\"hello\",\"id\":\"$U1\"}"
}

@test "branches lists the leaves with depth, role, text and the head" {
	build_tree
	run agentrt-tree branches s1
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(cat <<-EOF
	{"id":"$A2","depth":4,"role":"assistant","text":"second","head":false}
	{"id":"$A3","depth":4,"role":"assistant","text":"third","head":false}
	{"id":"$A4","depth":2,"role":"assistant","text":"fresh start","head":true}
	EOF
	)"
}

@test "diff prints the common ancestor, then a's tail, then b's" {
	build_tree
	run agentrt-tree diff s1 019b76da-a800-7056 "$A3"
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(cat <<-EOF
	{"type":"ancestor","id":"$U1","depth":1}
	{"type":"a","message":{"id":"$A1","role":"assistant","content":"hello"}}
	{"type":"a","message":{"role":"user","content":"second","id":"$U2"}}
	{"type":"a","message":{"id":"$A2","role":"assistant","content":"second"}}
	{"type":"b","message":{"role":"assistant","content":"regenerated","id":"$R1"}}
	{"type":"b","message":{"role":"user","content":"third","id":"$U3"}}
	{"type":"b","message":{"id":"$A3","role":"assistant","content":"third"}}
	EOF
	)"
	run agentrt-tree diff s1 "$A2" "$A4"
	assert_eq "${lines[0]}" '{"type":"ancestor","id":null,"depth":0}'
	assert_eq "${#lines[@]}" 7
	run agentrt-tree diff s1 "$U2" "$A2"
	assert_eq "$output" "$(printf '%s\n' \
	    "{\"type\":\"ancestor\",\"id\":\"$U2\",\"depth\":3}" \
	    "{\"type\":\"b\",\"message\":{\"id\":\"$A2\",\"role\":\"assistant\",\"content\":\"second\"}}")"
}

@test "export writes the active path as ndjson, openai, anthropic, markdown" {
	build_tree
	run agentrt-tree export s1
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(agentrt-tree path s1)"
	run agentrt-tree export --format ndjson s1
	assert_eq "$output" "$(agentrt-tree path s1)"
	run agentrt-tree export --format openai s1
	[ "$status" -eq 0 ]
	assert_eq "$output" '{"messages":[{"role":"user","content":"fresh start"},{"role":"assistant","content":"fresh start"}]}'
	run agentrt-tree export s1 --format=anthropic
	[ "$status" -eq 0 ]
	assert_eq "$output" '{"messages":[{"role":"user","content":"fresh start"},{"role":"assistant","content":"fresh start"}]}'
	run agentrt-tree export --format markdown s1
	[ "$status" -eq 0 ]
	assert_eq "$output" "$(printf '## user\n\nfresh start\n\n## assistant\n\nfresh start')"
}

@test "a session with no messages shows nothing and exports nothing" {
	agentrt-session new --id empty
	run agentrt-tree show empty
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run agentrt-tree path empty
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run agentrt-tree branches empty
	[ -z "$output" ]
	run agentrt-tree export --format openai empty
	assert_eq "$output" '{"messages":[]}'
	run agentrt-tree show --dot empty
	assert_eq "$output" "$(printf 'digraph "empty" {\n\tnode [shape=box];\n}')"
}

# --- checkout ---------------------------------------------------------

@test "checkout moves the head; show, path and the next turn follow it" {
	build_tree
	run agentrt-tree checkout s1 "$A2"
	[ "$status" -eq 0 ]
	assert_eq "$output" "{\"type\":\"head.moved\",\"head_id\":\"$A2\"}"
	assert_eq "$(agentrt-session show s1 | jq -r .head)" "$A2"
	run agentrt-tree show s1
	[[ $output == *'019b76da-a800-7056 second (head)'* ]] || fail "$output"
	assert_eq "$(agentrt-tree path s1 | jq -sc 'map(.id)')" \
	    "[\"$U1\",\"$A1\",\"$U2\",\"$A2\"]"
	# Checking out the head records nothing and prints nothing.
	seq=$(agentrt-session show s1 | jq .last_seq)
	run agentrt-tree checkout s1 "$A2"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	assert_eq "$(agentrt-session show s1 | jq .last_seq)" "$seq"
	# A prefix names a node as it does for path.
	run agentrt-tree checkout s1 "${A3:0:18}"
	[ "$status" -eq 0 ]
	assert_eq "$(jq -r .head_id <<<"$output")" "$A3"
	run_ring 5 -s s1 -m fourth
	assert_eq "$(agentrt-tree path s1 | jq -sc 'map(.content)[-5:]')" \
	    '["regenerated","third","third","fourth","fourth"]'
	assert_eq "$(agentrt-tree path s1 | jq -sr '.[-2].id' |
	    xargs agentrt-tree diff s1 "$A3" | jq -sr '.[0].id')" "$A3"
}

@test "checkout voids a call waiting off the new path and ends its turn" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	cp "$fixtures/agents/ask.json" "$BATS_TEST_TMPDIR/agents/"
	run run_ring 1 -a ask -s s2 -m go
	[ "$status" -eq 3 ] || fail "expected to park: $output"
	call=$(agentrt-session show s2 | jq -r '.open | keys[0]')
	u1=$(agentrt-tree path s2 | head -n 1 | jq -r .id)
	run agentrt-tree checkout s2 "$u1"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc 'map(.type)' <<<"$output")" \
	    '["head.moved","call.voided","turn.completed","session.done"]'
	assert_eq "$(jq -sc --arg id "$call" '.[1] | .id == $id' <<<"$output")" true
	assert_eq "$(jq -sr '.[2].error' <<<"$output")" \
	    "the head moved off the turn's branch"
	assert_eq "$(agentrt-session show s2 | jq -c '[.status, .open]')" '["idle",{}]'
	# The client's late answer is refused; a new turn starts at the head.
	run run_ring 2 -s s2 --input "{\"type\":\"tool.result\",\"id\":\"$call\",\"result\":\"yes\"}"
	assert_eq "$(agentrt-session log s2 | jq -sr 'map(.payload | select(.type == "error")) | last.code')" stale_settle
	run run_ring 3 -s s2 -m again
	[ "$status" -eq 3 ] || fail "expected to park again: $output"
	assert_eq "$(agentrt-tree path s2 | jq -sc 'map(.content)[:2]')" '["go","again"]'
}

@test "checkout refuses a session a running ring drives, and leaves it be" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/script","mock":{"script":[{"delay_ms":1500,"content":"late"}]}}' \
	    >"$BATS_TEST_TMPDIR/agents/slow.json"
	run_ring 1 -a slow -s s3 -m hi &
	local i head=null
	for i in $(seq 1 100); do
		head=$(agentrt-session show s3 2>/dev/null | jq -r .head) || true
		[ "$head" != null ] && [ -n "$head" ] && break
		sleep 0.05
	done
	run agentrt-tree checkout s3 "$head"
	wait
	[ "$status" -eq 1 ]
	[[ $output == "agentrt-tree: session 's3' is driven by process "*"; send it a client.messages view instead" ]] || fail "$output"
	assert_eq "$(agentrt-tree path s3 | jq -sc 'map(.content)')" '["hi","late"]'
	assert_eq "$(agentrt-session log s3 | jq -sc 'map(select(.payload.type == "head.moved")) | length')" 0
}

@test "checkout of an unknown session or node, or an ambiguous prefix, fails" {
	build_tree
	run agentrt-tree checkout nope "$A1"
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tree: no session 'nope'"
	run agentrt-tree checkout s1 zzz
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tree: session 's1': no node 'zzz'"
	run agentrt-tree checkout s1 019b76da
	[ "$status" -eq 1 ]
	[[ $output == *"is ambiguous"* ]]
	run agentrt-tree checkout s1
	[ "$status" -eq 2 ]
	assert_eq "${lines[0]}" 'usage: agentrt-tree checkout SESSION NODE'
	run agentrt-tree checkout s1 "$A1" extra
	[ "$status" -eq 2 ]
	assert_eq "$(agentrt-session show s1 | jq -r .head)" "$A4"
}

@test "an unknown session, node or ambiguous prefix fails with one line" {
	build_tree
	run agentrt-tree show nope
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tree: no session 'nope'"
	run agentrt-tree path s1 zzz
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tree: session 's1': no node 'zzz'"
	run agentrt-tree diff s1 "$A2" 019b76da
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tree: session 's1': node '019b76da' is ambiguous: 9 nodes start so"
}

@test "a missing store is no session, and is not made; a bad one is said" {
	run agentrt-tree -d "$BATS_TEST_TMPDIR/none" show s1
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tree: no session 's1'"
	[ ! -e "$BATS_TEST_TMPDIR/none" ]
	run agentrt-tree branches s1
	[ "$status" -eq 1 ]
	[ ! -e "$AGENTRT_DB" ]
	: >"$BATS_TEST_TMPDIR/file"
	run agentrt-tree --db "$BATS_TEST_TMPDIR/file" path s1
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-tree: open store '$BATS_TEST_TMPDIR/file': not a directory"
}

@test "the store is found as agentrt-session finds it" {
	build_tree
	local db=$AGENTRT_DB
	unset AGENTRT_DB
	run agentrt-tree branches s1
	[ "$status" -eq 1 ]
	mkdir -p "$XDG_DATA_HOME"
	mv "$db" "$XDG_DATA_HOME/agentrt"
	run agentrt-tree branches s1
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	run agentrt-tree -d "$XDG_DATA_HOME/agentrt" path s1
	[ "${#lines[@]}" -eq 2 ]
}

@test "usage errors exit 2 with the usage line" {
	run agentrt-tree
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == 'usage: agentrt-tree '* ]]
	assert_eq "${lines[1]}" "Try 'agentrt-tree --help' for more information."
	run agentrt-tree frob s1
	[ "$status" -eq 2 ]
	assert_eq "${lines[0]}" "agentrt-tree: unknown command 'frob'"
	run agentrt-tree show
	[ "$status" -eq 2 ]
	assert_eq "${lines[0]}" 'usage: agentrt-tree show [--dot] SESSION'
	run agentrt-tree show s1 extra
	[ "$status" -eq 2 ]
	run agentrt-tree branches s1 x
	[ "$status" -eq 2 ]
	run agentrt-tree path s1 a b
	[ "$status" -eq 2 ]
	run agentrt-tree diff s1 a
	[ "$status" -eq 2 ]
	assert_eq "${lines[0]}" 'usage: agentrt-tree diff SESSION A B'
	run agentrt-tree path --dot s1
	[ "$status" -eq 2 ]
	run agentrt-tree show --format openai s1
	[ "$status" -eq 2 ]
	run agentrt-tree --bogus show s1
	[ "$status" -eq 2 ]
	run agentrt-tree export --format yaml s1
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-tree: bad --format 'yaml': use ndjson, openai, anthropic or markdown"
}

@test "a write that fails exits 1 with a message" {
	build_tree
	run bash -c 'agentrt-tree show s1 >/dev/full'
	[ "$status" -eq 1 ]
	[[ $output == 'agentrt-tree: write: '* ]]
	run bash -c 'agentrt-tree path s1 >/dev/full'
	[ "$status" -eq 1 ]
	run bash -c 'agentrt-tree export --format markdown s1 >/dev/full'
	[ "$status" -eq 1 ]
}

@test "--help and --version" {
	run agentrt-tree --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == 'Usage: agentrt-tree '* ]]
	[[ $output == *'--dot'*'--format'* ]]
	run agentrt-tree -V
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == 'agentrt-tree '[0-9]* ]]
	# The libraries it links, and LMDB's is the one in use.
	v='[0-9]+\.[0-9]+(\.[0-9]+)?'
	[[ ${lines[1]} =~ ^libjq/$v\ LMDB/$v$ ]] || fail "${lines[1]}"
	[ "${#lines[@]}" -eq 2 ]
}

# bash_complete WORDS...: COMPREPLY for the last word, one per line.
bash_complete() {
	bash -c '
		source "$1" || exit 3
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMPREPLY=()
		_agentrt "$1" "${COMP_WORDS[COMP_CWORD]}" ""
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$top_srcdir/completions/agentrt.bash" "$@"
}

@test "bash completes commands, sessions, nodes and formats" {
	build_tree
	run bash_complete agentrt-tree ''
	assert_eq "${lines[*]}" 'show path branches diff checkout export'
	run bash_complete agentrt-tree show ''
	assert_eq "$output" s1
	run bash_complete agentrt-tree show --d
	assert_eq "${lines[*]}" '--dot --db'
	run bash_complete agentrt-tree path s1 019b76da-a800-71
	assert_eq "${lines[*]}" \
	    '019b76da-a800-7137 019b76da-a800-7138 019b76da-a800-7139'
	run bash_complete agentrt-tree -d "$AGENTRT_DB" diff s1 x 019b76da-a800-70
	assert_eq "${lines[*]}" '019b76da-a800-7055 019b76da-a800-7056'
	run bash_complete agentrt-tree branches s1 ''
	[ -z "$output" ]
	run bash_complete agentrt-tree export --format m
	assert_eq "$output" markdown
}
