# lib.bash - a clean, offline world for each command-line test
#
# Loaded by every tests/cli/*.bats with `load lib`.  make check exports
# top_srcdir and top_builddir; run by hand, both default to this checkout.
: "${top_srcdir:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
export PATH="$top_builddir:$top_builddir/tests/helpers:$PATH"

export HOME="$BATS_TEST_TMPDIR/home"
export XDG_DATA_HOME="$HOME/.local/share"
export XDG_CONFIG_HOME="$HOME/.config"
export XDG_STATE_HOME="$HOME/.local/state"
export AGENTRT_DB="$BATS_TEST_TMPDIR/db"
export LC_ALL=C TZ=UTC
unset OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
unset AGENTRT_CLOCK AGENTRT_ID_SEED AGENTRT_MAP_MAX AGENTRT_AGENTS
unset AGENTRT_TOOLS NO_COLOR
mkdir -p "$HOME"

# The fixtures shipped with the tests.
fixtures="$top_srcdir/tests/fixtures"

# Fails the test with a message (bats prints it).
fail() {
	printf '%s\n' "$*" >&2
	return 1
}

# assert_eq ACTUAL EXPECTED
assert_eq() {
	[ "$1" = "$2" ] || fail "expected '$2', got '$1'"
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
