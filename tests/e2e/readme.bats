#!/usr/bin/env bats
# readme.bats - the README's examples do what it says they do
#
# Runs the runnable examples (examples/tools/wordcount and its agent,
# examples/agents/team.json and its sub-agents, the first idiom's
# examples/clients/input.ndjson, the coprocess client
# examples/clients/chat.sh) offline on the mock, and the README's sh
# blocks marked `<!-- readme.bats: NAME -->`, taken from README.md as
# written and run as a reader runs them: from the top of a checkout, in
# the shell the set-up leaves.  Each test fails when its example breaks.

load lib

README="$top_srcdir/README.md"
CLIENTS="$top_srcdir/examples/clients"
CHECK="$top_builddir/tests/helpers/seed-check"

# The shell the set-up command leaves, in a checkout of our own (links to
# the real examples/ and tests/, so the tests write nothing in the source
# tree): the fifo `ring`, the example agents and tools found through the
# environment, and $tmp, where the README's examples write their files.
setup() {
	top="$BATS_TEST_TMPDIR/top"
	mkdir -p "$top" "$BATS_TEST_TMPDIR/tmp"
	ln -s "$top_srcdir/examples" "$top/examples"
	ln -s "$top_srcdir/tests" "$top/tests"
	mkfifo "$top/ring"
	export AGENTRT_AGENTS=examples/agents AGENTRT_TOOLS=examples/tools
	export tmp="$BATS_TEST_TMPDIR/tmp"
	cd "$top"
	worker_pids=()
}

teardown() {
	local pid
	for pid in "${worker_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	# A block run in a process group of its own: whatever it left running.
	[ -z "${block_pgid:-}" ] || kill -9 -- "-$block_pgid" 2>/dev/null
	return 0
}

# readme_block NAME: the sh block after `<!-- readme.bats: NAME -->` in
# README.md; fails when there is none, so a renamed block is caught.
readme_block() {
	local block
	block=$(awk -v mark="<!-- readme.bats: $1 -->" '
		$0 == mark { want = 1; next }
		want && /^```sh$/ { inside = 1; next }
		inside && /^```$/ { exit }
		inside { print }
		want && !inside && !/^$/ { exit }
	' "$README")
	[ -n "$block" ] || fail "README.md has no sh block marked 'readme.bats: $1'"
	printf '%s\n' "$block"
}

# run_block NAME: runs that block with bash, stdout and stderr in $output.
run_block() {
	local block
	block=$(readme_block "$1") || return 1
	run timeout 60 bash -c "$block" 2>&1
}

# sorted TEXT: its lines sorted, for output whose order the clock decides.
sorted() {
	printf '%s\n' "$1" | LC_ALL=C sort
}

@test "README ring: the calc turn, one stage a line, its events in \$tmp" {
	run_block ring
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(grep -v '^agentrt-session: ' <<<"$output")" "17*23 = 391"
}

@test "README prompt: a prompt on a model with no agent file, piped text, -C, an agent" {
	run_block prompt
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" $'hello there\nmilk, eggs\n\nSum it up.\nand again\n17*23 = 391'
	# Three sessions: -C went on in the second, as it says.
	assert_eq "$(agentrt-session ls | jq -sc 'sort_by(.created) | map(.agent_id)')" '["chat","chat","calc"]'
	assert_eq "$(agentrt-tree path "$(agentrt-session ls | jq -rs 'sort_by(.created) | .[1].id')" |
	    jq -sc 'map(.content)')" '["milk, eggs\n\nSum it up.","milk, eggs\n\nSum it up.","and again","and again"]'
}

@test "README: a session made first with new, run with -s, then inspected" {
	run_block inspect
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(agentrt-session ls -q | wc -l)" 1
	[[ $output == *"17*23 = 391"* ]] || fail "no answer in the tree: $output"
	grep -qx turn.completed <<<"$output" || fail "no turn.completed in the log: $output"
}

@test "README bash worker: toolloop.sh answers, and keeps its count in the state" {
	run_block worker
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" '17*23 = 391
{"model_calls":2}'
}

@test "README replay: a session made with new replays from its export" {
	run_block replay
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(jq -r .type <<<"$output")" replay.passed
}

@test "wordcount reads its arguments on stdin and prints the count on stdout" {
	[ -x examples/tools/wordcount ] || fail "examples/tools/wordcount lost its exec bit"
	run examples/tools/wordcount <<<'{"text": "the quick brown fox"}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" 4
	run examples/tools/wordcount <<<'{"text": ""}'
	assert_eq "$output" 0
}

@test "wordcount: bad arguments are exit 1 and one line on stderr" {
	run bash -c 'examples/tools/wordcount <<<"{}" 2>&1 >/dev/null'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$output" 'wordcount: expected {"text": "..."} on stdin'
	run bash -c 'examples/tools/wordcount <<<"not json" 2>/dev/null'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$output" ""
}

@test "wordcount.json declares the tool: --list prints it, counter takes it by name" {
	run agentrt-tool --list
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c 'select(.name == "wordcount") | [.description, .input.required]' <<<"$output")" \
		'["Count the words of a text",["text"]]'
	assert_eq "$(jq -c .tools examples/agents/counter.json)" '["wordcount"]'
	id=$(agentrt-session new -a counter)
	run timeout 60 bash -c 'agentrt-decide <ring | agentrt-llm | agentrt-tool |
	    agentrt-session run -s "$1" -m hi >ring' _ "$id"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(agentrt-session show "$id" | jq -c '.config.tools | map([.name, .description])')" \
		'[["wordcount","Count the words of a text"]]'
}

@test "README 'Write your own tool': the tool alone, then a turn of counter" {
	run_block wordcount
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(grep -v '^agentrt-session: ' <<<"$output")" '4
wordcount: expected {"text": "..."} on stdin
status 1
Count the words of a text
4 words'
}

@test "examples/clients/input.ndjson is a ClientInput of the seed protocol" {
	[ -x "$CHECK" ] || skip "no $CHECK (make check builds it)"
	run "$CHECK" "$fixtures/seed/protocol.json" ClientInput "$CLIENTS/input.ndjson"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -r .type "$CLIENTS/input.ndjson")" client.message
}

@test "README first idiom: the client's input piped into the ring ahead of agentrt-decide" {
	run_block first-idiom
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" "17*23 = 391"
	# The turn ran on the session made first, from the piped line alone.
	id=$(agentrt-session ls -q)
	assert_eq "$(agentrt-session show "$id" | jq -r .turn_status)" completed
	assert_eq "$(agentrt-tree path "$id" | jq -sc 'map(.content // "call")')" \
		'["What is 17*23?","call","391","17*23 = 391"]'
}

@test "README chat.sh: a coprocess client, one turn a line, the events read back" {
	run_block chat
	[ "$status" -eq 0 ] || fail "status $status: $output"
	id=$(agentrt-session ls -q)
	assert_eq "$output" "chat.sh: session $id
→ calc {\"expr\":\"17*23\"}
← calc: 391
17*23 = 391
→ calc {\"expr\":\"17*23\"}
← calc: 391
17*23 = 391"
	# Both turns went to the one session, one after the other.
	assert_eq "$(agentrt-tree path "$id" | jq -sc '[.[] | select(.role == "user") | .content]')" \
		'["What is 17*23?","Once more?"]'
}

@test "chat.sh: a parked turn is exit 3 and says how to resume; the resume line goes on" {
	export AGENTRT_AGENTS=tests/fixtures/agents
	run timeout 60 bash -c 'echo go | examples/clients/chat.sh guarded 2>/dev/null'
	[ "$status" -eq 3 ] || fail "status $status: $output"
	id=$(agentrt-session ls -q)
	iid=$(agentrt-session show "$id" | jq -r '.interrupts | keys[0]')
	assert_eq "$output" "→ calc {\"expr\":\"6*7\"}
parked: approval required: calc (resume: {\"type\":\"interrupt.resume\",\"interrupt_id\":\"$iid\",\"payload\":...})"
	run timeout 60 bash -c 'printf "%s\n" "$1" | examples/clients/chat.sh guarded "$2" 2>/dev/null' _ \
	    "{\"type\":\"interrupt.resume\",\"interrupt_id\":\"$iid\",\"payload\":{\"approved\":true}}" "$id"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" "← calc: 42
calc said: 42"
	assert_eq "$(agentrt-session ls -q | wc -l)" 1
}

@test "chat.sh: a failed turn is exit 1 and says why" {
	run timeout 60 bash -c 'echo "now run rm -rf / for me" | examples/clients/chat.sh careful 2>/dev/null'
	[ "$status" -eq 1 ] || fail "status $status: $output"
	assert_eq "$output" "turn failed: the user's message matched security pattern no-rm"
}

@test "chat.sh: wrong arguments are a usage error" {
	run examples/clients/chat.sh
	[ "$status" -eq 2 ] || fail "status $status: $output"
	assert_eq "$output" "usage: chat.sh AGENT [SESSION]"
	run examples/clients/chat.sh a b c
	[ "$status" -eq 2 ] || fail "status $status: $output"
}

@test "README sub-agents: team delegates to calc and counter at once, through chat.sh" {
	run_block team
	[ "$status" -eq 0 ] || fail "status $status: $output"
	# The calls run at once, so their lines come in either order.
	assert_eq "$(sorted "$(grep -v '^chat.sh: session \|^team: ' <<<"$output")")" "$(sorted '→ calc {"message":"What is 17*23?"}
→ counter {"message":"How many words in '\''the quick brown fox'\''?"}
  → calc {"expr":"17*23"}
  → wordcount {"text":"the quick brown fox"}
  ← calc: 391
  ← wordcount: 4
← calc: 17*23 = 391
← counter: 4 words')"
	last=$(tail -n 1 <<<"$output")
	[[ $last == "team: 17*23 = 391; 4 words" || $last == "team: 4 words; 17*23 = 391" ]] ||
	    fail "last line: $last"
	# Three sessions: the team's, and one for each sub-agent under it.
	assert_eq "$(agentrt-session ls | jq -sc 'map(.agent_id) | sort')" '["calc","counter","team"]'
	for id in $(agentrt-session ls | jq -r 'select(.agent_id != "team") | .id'); do
		assert_eq "$(agentrt-session show "$id" | jq -r '.ancestry | length')" 1
	done
}

@test "README autonomous: planner's plan drawn and ticked off, as the README shows it" {
	run_block planner
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(grep -v '^agentrt-session: ' <<<"$output")" "$(readme_block planner |
	    sed -n 's/^# //p')"
}

@test "README structured answers: analyst's table, as the README shows it" {
	run_block analyst
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$output" "$(readme_block analyst | sed -n 's/^# \{0,1\}//p' | sed 's/^#$//')"
}

@test "README HTTP worker: the ring starts once the worker listens, and no request fails" {
	command -v python3 >/dev/null || skip "no python3"
	block=$(readme_block http-worker)
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	run timeout 60 bash -c "${block//8080/$port}" 2>&1
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(grep -v '^agentrt-session: ' <<<"$output")" "17*23 = 391"
	assert_eq "$(head -n 1 "$tmp/worker.err")" "listening on $port"
	# Not one decision went out before the worker listened.
	assert_eq "$(jq -c 'select(.type == "error")' "$tmp/http.ndjson")" ""
}

@test "README user interfaces: a run through agentrt-serve with curl" {
	local block i
	block=$(readme_block serve) || return 1
	# The server runs on in the background, as a reader's would: the
	# block runs in a group of its own, ended once it has printed.
	setsid bash -c "$block" >"$tmp/serve.txt" 2>&1 </dev/null &
	block_pgid=$!
	for i in $(seq 1 300); do
		grep -q . "$tmp/serve.txt" && [ -n "$(sed -n 1p "$tmp/serve.txt")" ] &&
		    grep -qx '17\*23 = 391' "$tmp/serve.txt" && break
		sleep 0.1
	done
	kill -9 -- "-$block_pgid" 2>/dev/null
	assert_eq "$(cat "$tmp/serve.txt")" '17*23 = 391'
}

# What every sh block of the README writes, it writes under $tmp (or to
# the ring or a /dev file): a file left in the checkout, an agents/ above
# all, would join the search paths.
@test "README beyond one machine: a turn through nats-server, an engine host and a worker" {
	command -v nats-server >/dev/null ||
	    skip "nats-server is not installed (CI installs Debian's package)"
	local block i
	block=$(readme_block bus) || return 1
	# Its servers and hosts run on in the background, as a reader's would:
	# the block runs in a group of its own, ended once it has printed.
	setsid bash -c "$block" >"$tmp/bus.out" 2>&1 </dev/null &
	block_pgid=$!
	for i in $(seq 1 600); do
		kill -0 "$block_pgid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 -- "-$block_pgid" 2>/dev/null
	grep -qx '17\*23 = 391' "$tmp/bus.out" || fail "$(cat "$tmp/bus.out")"
}

@test "README sh blocks write their files under \$tmp, not in the checkout" {
	local bad
	bad=$(awk '
		/^```sh$/ { inside = 1; next }
		/^```$/ { inside = 0; next }
		!inside { next }
		{
			line = $0
			sub(/#.*/, "", line)
			while (match(line, /(--events|--record|-o|agentrt-session -d|mkdir -p) +[^ ]+|>>?[^&> ][^ ]*/)) {
				w = substr(line, RSTART, RLENGTH)
				line = substr(line, RSTART + RLENGTH)
				sub(/^(--events|--record|-o|agentrt-session -d|mkdir -p) +/, "", w)
				sub(/^>>?/, "", w)
				sub(/;$/, "", w)
				# >(...) is a process, not a file.
				if (w ~ /^"?\$tmp\// || w ~ /^\/dev\// || w == "ring" ||
				    w ~ /^\(/)
					continue
				print NR ": " w ": " $0
			}
		}' "$README")
	[ -z "$bad" ] || fail "README writes in the checkout at line $bad"
}

# The Layout section names every module of lib/.
@test "README Layout lists every lib/ module" {
	local h m layout missing=
	layout=$(sed -n '/^## Layout$/,/^## /p' "$README")
	for h in "$top_srcdir"/lib/*.h; do
		m=$(basename "$h" .h)
		grep -qw -- "$m" <<<"$layout" || missing="$missing $m"
	done
	[ -z "$missing" ] || fail "not in README's Layout:$missing"
}
