#!/usr/bin/env bash
# iofault.sh - a failed write at every point of a turn, and what it costs
#
# usage: tests/crash/iofault.sh [-s SYSCALL]... [-a AGENT] [-m TEXT]
#                               [--max N] [--json] [--keep DIR]
#
# For each SYSCALL (default fdatasync, pwrite64 and write), for N = 1, 2,
# ...: one turn of AGENT (default calc: one tool call, then the answer)
# on a fresh store, `agentrt-session run -a AGENT -m TEXT` on the usual
# ring, with that system call of agentrt-session made to fail with EIO at
# its Nth call (strace -e inject=SYSCALL:error=EIO:when=N).  Then, if a
# session was made, `agentrt-session run -s ID` on a clean ring until the
# turn is done (three times at most).  The loop for a SYSCALL ends at the
# first N whose run saw no failure (its calls were fewer than N), or at
# --max (default 60).
#
# One line per run, NDJSON with --json:
#   syscall, n     what failed, at which call
#   injected       1 when a call failed, 0 when the run had fewer
#   fd             the failed call's file descriptor (-1: none)
#   rc             the run's exit status
#   said           the run's stderr, its last line
#   session        whether a session was made
#   status, users  after the resume: the turn's status and how many user
#                  messages the session has (1: nothing lost, nothing twice)
#   answer         whether the session's last message is the right answer
#   call           the failed call as strace wrote it ("": none)
#
# --keep DIR keeps each run's strace and stderr as DIR/SYSCALL-N.trace
# and .err.
#
# Needs strace, jq and the built binaries on PATH (or in the checkout).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$here:$PATH"
syscalls=() agent=calc text='What is 17*23?' want='391' max=60 json=0 keep=
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	-s) syscalls+=("$2"); shift 2 ;;
	-a) agent=$2; shift 2 ;;
	-m) text=$2; shift 2 ;;
	--max) max=$2; shift 2 ;;
	--json) json=1; shift ;;
	--keep) keep=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ "${#syscalls[@]}" -gt 0 ] || syscalls=(fdatasync pwrite64 write)
command -v strace >/dev/null || { echo "iofault.sh: no strace" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AGENTRT_AGENTS="${AGENTRT_AGENTS:-$here/examples/agents}"
export AGENTRT_TOOLS="${AGENTRT_TOOLS:-$here/examples/tools}"
# LeakSanitizer cannot run under ptrace (a sanitizer build says so on
# stderr, as the run's last line); the leak checks run elsewhere.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# ring CMD...: decide | llm | tool | CMD >fifo, in $tmp; its status.
ring() {
	rm -f "$tmp/ring"
	mkfifo "$tmp/ring"
	timeout 30 agentrt-decide <"$tmp/ring" | agentrt-llm |
	    agentrt-tool | "$@" >"$tmp/ring"
	return "${PIPESTATUS[3]}"
}

trial() {
	local sc=$1 n=$2 rc injected call fd sid st='' users=0 answer=false k said
	rm -rf "$tmp/db"
	export AGENTRT_DB=$tmp/db
	ring strace -f -y -e trace="$sc" -e inject="$sc:error=EIO:when=$n" \
	    -o "$tmp/trace" agentrt-session run -a "$agent" -m "$text" \
	    2>"$tmp/err"
	rc=$?
	if [ -n "$keep" ]; then
		mkdir -p "$keep"
		cp "$tmp/trace" "$keep/$sc-$n.trace"
		cp "$tmp/err" "$keep/$sc-$n.err"
	fi
	injected=$(grep -c INJECTED "$tmp/trace")
	# The failed call, as strace wrote it: its line, or, when strace split
	# the call ("<... write resumed>", another traced thread ran
	# meanwhile), the "<unfinished ...>" line of the same process (of any
	# process when that one has none).  Its fd is the number after "(".
	call=$(awk '/<unfinished \.\.\.>/ { open[$1] = $0; last = $0 }
	    /INJECTED/ { l = $0
	        if (/resumed>/) l = ($1 in open) ? open[$1] : last
	        print l; exit }' "$tmp/trace")
	fd=$(printf '%s\n' "$call" |
	    sed -n 's/^[^(]*[a-z0-9_](\([0-9][0-9]*\).*/\1/p')
	said=$(tail -n 1 "$tmp/err")
	sid=$(agentrt-session ls -q 2>/dev/null | head -n 1)
	if [ -n "$sid" ]; then
		for k in 1 2 3; do
			st=$(agentrt-session show "$sid" | jq -r .turn_status)
			[ "$st" = completed ] && break
			ring agentrt-session run -s "$sid" 2>>"$tmp/resume.err"
		done
		st=$(agentrt-session show "$sid" | jq -r .turn_status)
		users=$(agentrt-session log "$sid" | jq -c 'select(
		    .payload.type == "message.new" and
		    .payload.message.role == "user")' | wc -l)
		answer=$(agentrt-tree path "$sid" 2>/dev/null | jq -s \
		    --arg w "$want" 'last | .content // "" | tostring |
		    contains($w)')
	fi
	jq -nc --arg sc "$sc" --argjson n "$n" --argjson inj "$injected" \
	    --argjson fd "${fd:--1}" --arg call "$call" --argjson rc "$rc" \
	    --arg said "$said" \
	    --argjson made "$([ -n "$sid" ] && echo true || echo false)" \
	    --arg st "$st" --argjson users "$users" --argjson answer \
	    "${answer:-false}" '{syscall: $sc, n: $n, injected: $inj, fd: $fd,
	    rc: $rc, said: $said, session: $made, status: $st, users: $users,
	    answer: $answer, call: $call}' >"$tmp/line"
	if [ "$json" = 1 ]; then
		cat "$tmp/line"
	else
		jq -r '"\(.syscall) n=\(.n) injected=\(.injected) fd=\(.fd) " +
		    "rc=\(.rc) session=\(.session) status=\(.status) " +
		    "users=\(.users) answer=\(.answer): \(.said)"' "$tmp/line"
	fi
	[ "$injected" -gt 0 ]
}

for sc in "${syscalls[@]}"; do
	for n in $(seq 1 "$max"); do
		trial "$sc" "$n" || break
	done
done
