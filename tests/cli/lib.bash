# lib.bash - a clean, offline world for each command-line test
#
# Loaded by every tests/cli/*.bats with `load lib`.  make check exports
# top_srcdir and top_builddir; run by hand, both default to this checkout.
: "${top_srcdir:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
# make check-valgrind puts wrappers that run each binary under valgrind
# first ($ART_TEST_WRAP).
export PATH="${ART_TEST_WRAP:+$ART_TEST_WRAP:}$top_builddir:$top_builddir/tests/helpers:$PATH"

export HOME="$BATS_TEST_TMPDIR/home"
export XDG_DATA_HOME="$HOME/.local/share"
export XDG_CONFIG_HOME="$HOME/.config"
export XDG_STATE_HOME="$HOME/.local/state"
export AGENTRT_DB="$BATS_TEST_TMPDIR/db"
export LC_ALL=C TZ=UTC
unset OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
unset AGENTRT_CLOCK AGENTRT_ID_SEED AGENTRT_MAP_MAX AGENTRT_AGENTS AGENTRT_SYNC
unset AGENTRT_TOOLS NO_COLOR
# The test servers are on loopback: no proxy may take their requests.
export no_proxy="*" NO_PROXY="*"
mkdir -p "$HOME"

# The fixtures shipped with the tests.
fixtures="$top_srcdir/tests/fixtures"

# need_agui: skips, saying so, without node or the AG-UI packages that
# `make agui-core` installs ($AGUI_DIR, exported by make check).
need_agui() {
	command -v node >/dev/null || skip "node is not installed"
	[ -n "${AGUI_DIR:-}" ] && [ -d "$AGUI_DIR/node_modules/@ag-ui/client" ] ||
	    skip "the AG-UI packages are not installed: make agui-core"
}

# Fails the test with a message (bats prints it).
fail() {
	printf '%s\n' "$*" >&2
	return 1
}

# assert_eq ACTUAL EXPECTED
assert_eq() {
	[ "$1" = "$2" ] || fail "expected '$2', got '$1'"
}

# proc_report [PID]: what a test that waited too long leaves running, for
# its failure message: each of the project's processes (and the peers the
# tests start) with its state and what the kernel has it waiting in, and
# PID's kernel stack when it can be read.
proc_report() {
	ps -eo pid,ppid,pgid,stat,wchan:24,etime,args 2>/dev/null |
	    awk 'NR == 1 || /agentrt|curl|node|nats-server|chromium|python3/' |
	    grep -v ' awk ' | cut -c1-200 | head -40
	[ -z "${1:-}" ] || sed 's/^/  /' "/proc/$1/stack" 2>/dev/null
}

# wait_pid PID SECONDS [WHAT]: waits for PID, a child of the test's shell,
# to end, and sets wait_status to its exit status.  One still running after
# SECONDS fails the test, saying what was running (proc_report), and is
# killed: a test never waits for ever.
wait_pid() {
	local pid=$1 secs=$2 i state report=
	for ((i = 0; i < secs * 10; i++)); do
		# Gone, or a zombie (ended, not yet waited for).
		state=$(sed 's/^.*) //; s/ .*//' "/proc/$pid/stat" 2>/dev/null) ||
		    break
		[ "$state" != Z ] || break
		sleep 0.1
	done
	if ((i >= secs * 10)); then
		report=$(proc_report "$pid")
		kill -KILL "$pid" 2>/dev/null
	fi
	wait_status=0
	wait "$pid" 2>/dev/null || wait_status=$?
	[ -z "$report" ] ||
	    fail "${3:-pid $pid} still ran after ${secs} s; killed:"$'\n'"$report"
}

# Waits up to 20 s for FILE to hold at least N lines.
wait_lines() {
	local i
	for i in $(seq 1 400); do
		[ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "timed out waiting for $2 lines in $1 (it has $(wc -l <"$1"))"
}

# start_server: the scriptable model server (tests/helpers/llmserver.py)
# on a free loopback port, logging requests to $srv_log; sets $srv (its
# base, http://127.0.0.1:PORT), its fixture/ paths read from
# $SERVER_FIXTURES when set.  Skips the test when python3 is missing.
# stop_server (from teardown) ends it.
start_server() {
	command -v python3 >/dev/null || skip "no python3"
	local pf="$BATS_TEST_TMPDIR/port" i
	srv_log="$BATS_TEST_TMPDIR/server.log"
	rm -f "$pf"
	python3 "$top_srcdir/tests/helpers/llmserver.py" --port-file "$pf" \
	    --log "$srv_log" ${SERVER_FIXTURES:+--fixtures "$SERVER_FIXTURES"} \
	    2>"$BATS_TEST_TMPDIR/server.err" &
	srv_pid=$!
	for i in $(seq 1 200); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	[ -s "$pf" ] || fail "the test server did not start: $(cat \
	    "$BATS_TEST_TMPDIR/server.err")"
	srv="http://127.0.0.1:$(cat "$pf")"
}

stop_server() {
	if [ -n "${srv_pid:-}" ]; then
		kill "$srv_pid" 2>/dev/null || true
		wait "$srv_pid" 2>/dev/null || true
		srv_pid=
	fi
}

# mcp_server_setup: $MCP_JS, the script of the real MCP server that make
# mcp-server installs into a cache shared with tests/unit/mcp-test (make
# check names it in $MCP_SERVER_JS), and $MCP_SKIP, why its tests are
# skipped ("" when they run).  For a setup_file.
mcp_server_setup() {
	export MCP_JS="${MCP_SERVER_JS:-}"
	export MCP_SKIP=
	if ! command -v node >/dev/null; then
		MCP_SKIP="no node on this machine"
	elif ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
		MCP_SKIP="node $(node --version) is older than 20, which the server needs"
	elif [ -z "$MCP_JS" ] || [ ! -f "$MCP_JS" ]; then
		MCP_SKIP="the MCP server is not installed (make mcp-server)"
	fi
}
