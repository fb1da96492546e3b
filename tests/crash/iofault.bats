#!/usr/bin/env bats
# The I/O fault loop (issue 40): agentrt-session's fdatasync, pwrite64
# and write made to fail with EIO at their 1st, 2nd, ... call, until a
# turn runs untouched; each cut run resumed with `run -s`.  One run of
# iofault.sh in setup_file; each test checks one thing of every trial.

load ../cli/lib

setup_file() {
	[ -z "${ART_VALGRIND:-}" ] || return 0
	command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null ||
	    return 0
	"$top_srcdir/tests/crash/iofault.sh" --json --keep "$BATS_FILE_TMPDIR/runs" \
	    >"$BATS_FILE_TMPDIR/iofault.ndjson" 2>"$BATS_FILE_TMPDIR/iofault.err"
	echo $? >"$BATS_FILE_TMPDIR/iofault.rc"
}

setup() {
	[ -z "${ART_VALGRIND:-}" ] || skip "not under valgrind: too slow"
	[ -f "$BATS_FILE_TMPDIR/iofault.rc" ] ||
	    skip "strace cannot trace here (apt-get install strace)"
	out="$BATS_FILE_TMPDIR/iofault.ndjson"
	[ "$(cat "$BATS_FILE_TMPDIR/iofault.rc")" = 0 ] ||
	    fail "iofault.sh failed: $(cat "$BATS_FILE_TMPDIR/iofault.err")"
}

# trials FILTER: the trials FILTER selects, whole, each with the last
# lines of its stderr: what a failed check prints, and [] when none.
trials() {
	local t
	jq -c "select($1)" "$out" | while read -r t; do
		echo "$t"
		tail -n 5 "$BATS_FILE_TMPDIR/runs/$(jq -r '"\(.syscall)-\(.n)"' \
		    <<<"$t").err" | sed 's/^/    /'
	done
}

@test "each system call failed at every point of a turn, until one ran untouched" {
	local sc
	for sc in fdatasync pwrite64 write; do
		# Failures at five points at least, then a clean run.
		[ "$(jq -s --arg s "$sc" 'map(select(.syscall == $s and
		    .injected > 0)) | length' "$out")" -ge 5 ] ||
		    fail "$sc failed at fewer than 5 points"
		assert_eq "$(jq -sc --arg s "$sc" 'map(select(.syscall == $s)) |
		    last | [.injected, .rc]' "$out")" '[0,0]'
	done
}

@test "a failed write is said, and the run exits non-zero" {
	# But a write to stderr itself: there is nowhere left to say it.
	assert_eq "$(trials '.injected > 0 and .fd != 2 and
	    (.rc == 0 or .said == "")')" ''
}

@test "nothing recorded is lost, nothing twice: run -s finishes every turn" {
	assert_eq "$(trials '.session and (.status != "completed" or
	    .users != 1 or (.answer | not))')" ''
}

@test "a failure before the first commit makes no session, and says so" {
	# The store's own set-up, or the commit that makes the session with
	# its message: never a session without the message typed.
	[ "$(jq -s 'map(select(.session | not)) | length' "$out")" -ge 3 ]
	assert_eq "$(trials '(.session | not) and (.said |
	    test("no session was made|store .*Input/output error") | not)')" ''
}

@test "agentrt-tool whose commit failed reopens the store: later calls run" {
	local sc n at
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	jq -n '{model: "mock/script", tools: [{name: "calc",
	    description: "calc", input: {type: "object",
	    properties: {expr: {type: "string"}}}}],
	    mock: {script: (([1, 2, 3] | map({tool_calls: [{name: "calc",
	        arguments: {expr: "\(.)+\(.)"}}]})) + [{content: "done"}])}}' \
	    >"$BATS_TEST_TMPDIR/agents/three.json"
	export AGENTRT_AGENTS=$BATS_TEST_TMPDIR/agents
	export AGENTRT_TOOLS=$top_srcdir/examples/tools
	# LeakSanitizer cannot run under ptrace; the leak checks run elsewhere.
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	# The first call's claim fails: its data's sync, or its meta page's
	# write, after which LMDB fails every transaction (MDB_PANIC) until
	# the environment is opened again.
	for at in fdatasync:1 pwrite64:2; do
		sc=${at%:*} n=${at#*:}
		export AGENTRT_DB=$BATS_TEST_TMPDIR/db-$sc
		rm -f "$BATS_TEST_TMPDIR/ring"
		mkfifo "$BATS_TEST_TMPDIR/ring"
		{ timeout 30 agentrt-decide <"$BATS_TEST_TMPDIR/ring" |
		    agentrt-llm | strace -f -e trace="$sc" \
		    -e inject="$sc:error=EIO:when=$n" -o "$BATS_TEST_TMPDIR/trace" \
		    agentrt-tool | agentrt-session run -a three -m go \
		    >"$BATS_TEST_TMPDIR/ring"; } 2>"$BATS_TEST_TMPDIR/err"
		grep -q INJECTED "$BATS_TEST_TMPDIR/trace"
		grep -q "agentrt-tool: .*Input/output error" "$BATS_TEST_TMPDIR/err"
		# That call is refused, said to the model; the next two run.
		assert_eq "$(agentrt-tree path "$(agentrt-session ls -q)" |
		    jq -sc 'map(select(.role == "tool") | .content)')" \
		    '["cannot record the call before it runs","4","6"]'
		! grep -q MDB_PANIC "$BATS_TEST_TMPDIR/err"
	done
}
