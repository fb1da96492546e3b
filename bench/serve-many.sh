#!/usr/bin/env bash
# serve-many.sh - N concurrent agent turns through one agentrt-serve, and
# the same N in one Node process with @openai/agents (issue 34).
#
# usage: bench/serve-many.sh [-n N] [-k K] [-r ROUNDS] [-b BINDIR]...
#                            [-o FILE] [--no-peer]
#
# A turn is the K-step tool loop of bench/compare.sh: the user says "go",
# the model (bench/mockllm.py over HTTP on 127.0.0.1, one server for the
# whole bench) asks K times for add(a, b), the jq tool .a + .b answers,
# and the model says "done after K steps".  A round is N such turns at
# once, each on its own thread:
#
#   agentrt        a fresh agentrt-serve (BINDIR's; it runs its ring from
#                  the same directory) on a fresh store, an openai/mock-model
#                  agent; once it listens, one curl process posts the N
#                  RunAgentInputs in parallel (curl -Z), each its own
#                  threadId, and reads the N SSE streams to their ends;
#                  then agentrt-serve is stopped with SIGTERM
#   openai-agents  bench/peers/openai-agents-many.mjs N K: one node process,
#                  N run()s of one agent at once
#
# Rounds are interleaved: round 1 of each BINDIR in the order given, then
# the peer, then round 2, and so on.  Each round resets the mock's counters
# and checks after it that they are N * (K + 1) calls and N final answers,
# that every SSE stream's last event is RUN_FINISHED with outcome success
# and the answer, and that agentrt-serve logged N successful runs; any
# failure stops the bench with the evidence.  agentrt-serve's standard
# error (the ring's too) is kept and printed at the end if not empty.
#
# For each round:
#   turns/s     N / wall: agentrt, from the start of the curl process to
#               its exit; the peer, from just before its first run() to the
#               end of its last (its own clock, after node has loaded)
#   cpu/turn    ms of user + system CPU / N: agentrt, of agentrt-serve and
#               every descendant (bench/proctree.py cpu: utime + stime +
#               cutime + cstime from /proc, taken just before and just after
#               the curl process, so start-up and shut-down are not in it;
#               the lifetime figure from getrusage(RUSAGE_CHILDREN) of a
#               wrapper, bench/rusage.c, is in the raw figures as a check);
#               the peer, its process.cpuUsage() over the same span as its
#               wall.  Neither includes curl or the mock
#   peak PSS    MiB, the largest sum of Pss (/proc/PID/smaps_rollup) over
#               the process tree, sampled every 100 ms during the round by
#               bench/proctree.py pss (the same for both)
#   mock cpu    ms of CPU of the Python mock server a turn, for scale: it
#               shares the 2 cores with whoever it serves
# Then the medians over the rounds, and each agentrt ÷ the peer.
#
#   -n N        concurrent turns a round (default 50)
#   -k K        tool steps a turn (default 10)
#   -r ROUNDS   rounds of each (default 3)
#   -b BINDIR   where agentrt-serve and its ring's binaries are (default:
#               the checkout); repeatable, to compare builds in one run
#   -o FILE     also write every round's figures to FILE
#   --no-peer   agentrt only (no node needed)
#
# Needs bash, python3, curl (7.66 or later, for -Z), jq, cc (for
# bench/rusage.c) and, unless --no-peer, node and the peers' packages:
# (cd bench/peers && npm ci).  A round is cut off after 120 + 2K s
# ($SERVE_MANY_TIMEOUT overrides); $SERVE_MANY_KEEP=1 leaves the work
# directory (stores, streams, logs of the last round of each) in place.
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

n=50 k=10 rounds=3 bins=() out= peer=1
args=()
for a in "$@"; do
	case $a in
	--no-peer|--no-peers) peer= ;;
	--help) usage; exit 0 ;;
	*) args+=("$a") ;;
	esac
done
set -- ${args[@]+"${args[@]}"}
while getopts n:k:r:b:o:h opt; do
	case $opt in
	n) n=$OPTARG ;;
	k) k=$OPTARG ;;
	r) rounds=$OPTARG ;;
	b) bins+=("$OPTARG") ;;
	o) out=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
for v in "$n" "$rounds"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "$0: -n and -r want a positive count, not $v" >&2; exit 2; }
done
[[ $k =~ ^[0-9]+$ ]] || { echo "$0: -k wants a step count, not $k" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
[ ${#bins[@]} -gt 0 ] || bins=("$here")
for i in "${!bins[@]}"; do
	bins[i]=$(cd "${bins[i]}" && pwd)
	for b in agentrt-serve agentrt-decide agentrt-llm agentrt-tool agentrt-session; do
		[ -x "${bins[i]}/$b" ] || { echo "$0: no ${bins[i]}/$b (build agentrt, or pass -b BINDIR)" >&2; exit 2; }
	done
done
need() { command -v "$1" >/dev/null || { echo "$0: needs $1${2:+: $2}" >&2; exit 2; }; }
need python3 'apt-get install python3'
need curl 'apt-get install curl'
need jq 'apt-get install jq'
need cc 'apt-get install gcc'
need setsid 'apt-get install util-linux'
if [ -n "$peer" ]; then
	need node 'apt-get install nodejs npm'
	[ -d "$here/bench/peers/node_modules/@openai/agents" ] ||
	    { echo "$0: the peer is not installed: (cd bench/peers && npm ci), or --no-peer" >&2; exit 2; }
fi

work=$(mktemp -d)
srv_pid= serve_root= sampler=
cleanup() {
	[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
	[ -z "$serve_root" ] || kill -KILL -- "-$serve_root" 2>/dev/null || true
	[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null || true
	if [ -n "${SERVE_MANY_KEEP:-}" ]; then echo "serve-many: left $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -O2 -o "$work/rusage" "$here/bench/rusage.c"
proctree=$here/bench/proctree.py
limit=${SERVE_MANY_TIMEOUT:-$((120 + 2 * k))}
mkdir -p "$work/agents" "$work/tools"
printf '.a + .b\n' >"$work/tools/add.jq"
jq -n '{model: "openai/mock-model", tools: [{name: "add", description: "a+b",
        input: {type: "object", properties: {a: {type: "number"}, b: {type: "number"}}}}]}' \
    >"$work/agents/bench-add.json"
export OPENAI_API_KEY=sk-bench-dummy OPENAI_AGENTS_DISABLE_TRACING=1
unset COMPARE_AGENT AGENTRT_AGENTS AGENTRT_TOOLS

# The mock, for the whole bench.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
MOCKLLM_HOST=127.0.0.1 MOCKLLM_LATENCY_MS=0 MOCKLLM_LOG= MOCKLLM_DUMP= \
    python3 "$here/bench/mockllm.py" "$port" "$k" 2>>"$work/mockllm.err" &
srv_pid=$! srv_url=http://127.0.0.1:$port
for _ in $(seq 100); do
	curl -sf -o /dev/null "$srv_url/v1/models" && break
	kill -0 "$srv_pid" 2>/dev/null || { echo "$0: the mock server did not start:" >&2; cat "$work/mockllm.err" >&2; exit 1; }
	sleep 0.05
done
export OPENAI_BASE_URL=$srv_url/v1
reset() { curl -sf -o /dev/null -X POST "$srv_url/mock/reset"; }

# check WHAT: the mock saw N whole turns.
check() {
	local s
	s=$(curl -sf "$srv_url/mock/stats")
	if [ "$(jq -c '[.chat_requests, .finals, .errors]' <<<"$s")" != "[$((n * (k + 1))),$n,0]" ]; then
		echo "$0: $1 did not make $n whole turns of K = $k: the mock's stats $s" >&2
		return 1
	fi
}

# label BINDIR: agentrt@COMMIT when BINDIR is a git checkout, else its name.
label() {
	local c
	if c=$(git -C "$1" rev-parse --short HEAD 2>/dev/null); then
		git -C "$1" diff --quiet HEAD -- '*.c' '*.h' 2>/dev/null || c="$c+"
		echo "agentrt@$c"
	else
		echo "agentrt@$(basename "$1")"
	fi
}

# The N request bodies and the curl config that posts them at once.
mkdir -p "$work/body"
for i in $(seq 1 "$n"); do
	jq -nc --arg t "t$i" '{threadId: $t, runId: ($t + "-r"),
	    messages: [{id: ($t + "-u"), role: "user", content: "go"}]}' >"$work/body/$i.json"
done

# agentrt LABEL BINDIR ROUND: one round; prints
# "turns_s cpu_ms_turn pss_mib mock_ms_turn wall_ms cpu_ms life_cpu_ms procs".
agentrt() {
	local lab=$1 bin=$2 r=$3 d="$work/a" url spid cpu0 cpu1 t0 t1 pss procs samples i last bad=0
	rm -rf "$d"
	mkdir -p "$d/sse"
	reset
	setsid "$work/rusage" "$d/rusage" "$bin/agentrt-serve" --port 0 -d "$d/db" \
	    --agents "$work/agents" --tools "$work/tools" --max-runs $((n + 16)) \
	    >"$d/serve.out" 2>"$d/serve.err" &
	serve_root=$!
	for _ in $(seq 200); do
		url=$(jq -r 'select(.type == "listening") | .url' "$d/serve.out" 2>/dev/null | head -n 1)
		[ -z "$url" ] || break
		kill -0 "$serve_root" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$url" ] || { echo "$0: $lab: agentrt-serve did not listen:" >&2; cat "$d/serve.err" >&2; exit 1; }
	# The tree measured is agentrt-serve's, not the wrapper's.
	spid=$(cat "/proc/$serve_root/task/$serve_root/children")
	spid=${spid// /}
	sleep 0.3   # let the ring come up (the one-engine build starts it now)
	{
		for i in $(seq 1 "$n"); do
			# After "next" only the global options hold: say the rest again.
			printf 'url = "%sagents/bench-add"\ndata-binary = "@%s"\noutput = "%s"\n' \
			    "$url" "$work/body/$i.json" "$d/sse/$i"
			printf 'silent\nshow-error\nmax-time = %d\nwrite-out = "%%{http_code} %%{time_total}\\n"\n' "$limit"
			[ "$i" = "$n" ] || echo next
		done
	} >"$d/curl.cfg"
	python3 "$proctree" pss 100 "$spid" >"$d/pss" &
	sampler=$!
	read -r cpu0 m0 < <(python3 "$proctree" cpu "$spid" "$srv_pid")
	t0=$(date +%s%N)
	timeout $((limit + 10)) curl --no-progress-meter -sS -Z --parallel-immediate --parallel-max "$n" \
	    -K "$d/curl.cfg" >"$d/curl.out" 2>"$d/curl.err" || bad=1
	t1=$(date +%s%N)
	read -r cpu1 m1 < <(python3 "$proctree" cpu "$spid" "$srv_pid")
	kill "$sampler"
	wait "$sampler" || true
	sampler=
	read -r pss procs samples <"$d/pss"
	kill -TERM "$spid" 2>/dev/null || true
	for _ in $(seq 200); do kill -0 "$serve_root" 2>/dev/null || break; sleep 0.05; done
	kill -KILL -- "-$serve_root" 2>/dev/null || true
	wait "$serve_root" 2>/dev/null || true
	serve_root=
	if [ -s "$d/serve.err" ]; then
		{ echo "== $lab round $r: agentrt-serve's standard error"; cat "$d/serve.err"; } >>"$work/stderr"
	fi
	# Every stream ends in RUN_FINISHED, success, with the answer.
	for i in $(seq 1 "$n"); do
		last=$(sed -n 's/^data: //p' "$d/sse/$i" 2>/dev/null | tail -n 1)
		if ! jq -e --arg t "t$i" --arg a "done after $k steps" \
		    '.type == "RUN_FINISHED" and .threadId == $t and .outcome.type == "success" and .result == $a' \
		    <<<"${last:-null}" >/dev/null 2>&1; then
			echo "$0: $lab round $r: run t$i did not end in RUN_FINISHED with \"done after $k steps\"; its last event: ${last:-(none)}" >&2
			bad=1
		fi
	done
	if [ "$(grep -c '"outcome":"success"' "$d/serve.out")" != "$n" ]; then
		echo "$0: $lab round $r: agentrt-serve logged $(grep -c '"outcome":"success"' "$d/serve.out") successful runs, not $n" >&2
		bad=1
	fi
	check "$lab round $r" || bad=1
	if [ "$bad" = 1 ]; then
		echo "$0: $lab round $r failed; curl's exit codes and times:" >&2
		sort "$d/curl.out" | uniq -c | sort -rn | head -n 5 >&2
		cat "$d/curl.err" >&2
		echo "agentrt-serve's stdout (last 5) and standard error (last 30):" >&2
		tail -n 5 "$d/serve.out" >&2
		tail -n 30 "$d/serve.err" >&2
		exit 1
	fi
	awk -v n="$n" -v t0="$t0" -v t1="$t1" -v c0="$cpu0" -v c1="$cpu1" -v m0="$m0" -v m1="$m1" \
	    -v pss="$pss" -v procs="$procs" '
	    { life = ($2 + $3) / 1000 }
	    END { w = (t1 - t0) / 1e6
	        printf "%.2f %.1f %.1f %.1f %.0f %.0f %.0f %d\n", n / (w / 1000), (c1 - c0) / n,
	            pss / 1024, (m1 - m0) / n, w, c1 - c0, life, procs }' "$d/rusage"
}

# peer ROUND: one round of the peer, the same figures (life_cpu_ms: -).
peer() {
	local r=$1 d="$work/p" m0 m1 pid node pss procs samples rc=0
	rm -rf "$d"
	mkdir -p "$d"
	reset
	read -r m0 < <(python3 "$proctree" cpu "$srv_pid")
	setsid timeout "$limit" node "$here/bench/peers/openai-agents-many.mjs" "$n" "$k" \
	    >"$d/out" 2>"$d/err" &
	pid=$!
	# The tree measured is node's, not timeout's.
	for _ in $(seq 200); do
		node=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null) && [ -n "$node" ] && break
		sleep 0.01
	done
	python3 "$proctree" pss 100 ${node:-$pid} >"$d/pss" &
	sampler=$!
	wait "$pid" || rc=$?
	read -r m1 < <(python3 "$proctree" cpu "$srv_pid")
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" || true
	sampler=
	read -r pss procs samples <"$d/pss"
	if [ "$rc" != 0 ] || ! check "openai-agents round $r"; then
		echo "$0: openai-agents round $r failed (exit $rc):" >&2
		cat "$d/out" >&2
		tail -n 30 "$d/err" >&2
		exit 1
	fi
	[ ! -s "$d/err" ] || { echo "== openai-agents round $r: standard error"; cat "$d/err"; } >>"$work/stderr"
	jq -r --argjson n "$n" --argjson m "$(((m1 - m0)))" --argjson pss "$pss" --argjson procs "$procs" \
	    '"\($n / (.wall_ms / 1000) * 100 | round / 100) \(.cpu_ms / $n * 10 | round / 10) \($pss / 1024 * 10 | round / 10) \($m / $n * 10 | round / 10) \(.wall_ms | round) \(.cpu_ms | round) - \($procs) self_pss_mib=\(.peak_pss_kib / 1024 * 10 | round / 10)"' "$d/out"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

labels=()
for b in "${bins[@]}"; do labels+=("$(label "$b")"); done
echo "serve-many: N = $n concurrent turns of K = $k, $rounds rounds; ${labels[*]}${peer:+; node $(node --version)}; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
: >"$work/runs"
: >"$work/stderr"
for r in $(seq 1 "$rounds"); do
	for i in "${!bins[@]}"; do
		f=$(agentrt "${labels[i]}" "${bins[i]}" "$r")
		echo "${labels[i]} $r $f" >>"$work/runs"
		echo "round $r/$rounds ${labels[i]}: turns/s cpu_ms/turn pss_MiB mock_ms/turn wall_ms cpu_ms life_cpu_ms procs = $f" >&2
	done
	if [ -n "$peer" ]; then
		f=$(peer "$r")
		echo "openai-agents $r $f" >>"$work/runs"
		echo "round $r/$rounds openai-agents: turns/s cpu_ms/turn pss_MiB mock_ms/turn wall_ms cpu_ms - procs = $f" >&2
	fi
done
[ -z "$out" ] || {
	echo "# framework round turns_s cpu_ms_turn peak_pss_mib mock_cpu_ms_turn wall_ms cpu_ms lifetime_cpu_ms peak_processes"
	cat "$work/runs"
} >"$out"

fws=("${labels[@]}")
[ -z "$peer" ] || fws+=(openai-agents)
printf '\nN = %d concurrent turns of K = %d, medians of %d rounds\n' "$n" "$k" "$rounds"
printf '%-22s %9s %12s %9s %13s %10s\n' framework turns/s cpu_ms/turn pss_MiB mock_ms/turn processes
: >"$work/med"
for fw in "${fws[@]}"; do
	sel() { awk -v f="$fw" -v c="$1" '$1 == f { print $c }' "$work/runs"; }
	t=$(sel 3 | median) c=$(sel 4 | median) p=$(sel 5 | median) m=$(sel 6 | median) q=$(sel 10 | median)
	printf '%-22s %9.2f %12.1f %9.1f %13.1f %10s\n' "$fw" "$t" "$c" "$p" "$m" "$q"
	echo "$fw $t $c $p" >>"$work/med"
done
if [ -n "$peer" ]; then
	echo
	awk '{ t[NR] = $2; c[NR] = $3; p[NR] = $4; f[NR] = $1 }
	    END { for (i = 1; i < NR; i++)
	        printf "%s ÷ openai-agents: turns/s %.2fx, CPU a turn %.2fx, peak PSS %.2fx\n",
	            f[i], t[i] / t[NR], c[i] / c[NR], p[i] / p[NR] }' "$work/med"
fi
if [ -s "$work/stderr" ]; then
	echo >&2
	echo "serve-many: standard error of the servers and the peer:" >&2
	cat "$work/stderr" >&2
fi
