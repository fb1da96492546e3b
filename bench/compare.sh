#!/usr/bin/env bash
# compare.sh - agentrt against two JavaScript agent frameworks, same loop.
#
# usage: bench/compare.sh [-k K[:RUNS]]... [-r RUNS] [-b BINDIR] [-o FILE]
#                         [--no-peers] [--security] [--large]
#
# One agent turn of K tool steps: the user says "go", the model (our mock,
# bench/mockllm.py, over HTTP on 127.0.0.1) asks K times for add(a, b), and
# then answers "done after K steps".  Three ways to run that turn:
#
#   agentrt        the ring of bench/ring.sh --http: agentrt-decide <fifo |
#                  agentrt-llm | agentrt-tool | agentrt-session run >fifo,
#                  an openai/mock-model agent with the jq tool .a + .b, a
#                  fresh store each run, not streaming
#   openai-agents  bench/peers/openai-agents.mjs: @openai/agents, chat
#                  completions model, a zod function tool
#   langgraph      bench/peers/langgraph.mjs: @langchain/langgraph's
#                  createReactAgent with @langchain/openai's ChatOpenAI
#
# For each K (default 10 100 1000) it starts one mock server with that K on
# a free port, and runs RUNS rounds (default 3; K:RUNS sets it for one K)
# of agentrt, openai-agents, langgraph in turn, resetting the server's
# counters before each run and checking after it that the run made K + 1
# calls and got one final answer.  Then one untimed agentrt turn under
# strace, with a byte-counting tap (bench/tap.py) on each of the ring's
# four pipes.  It prints the medians and the ratios; see bench/README.md.
#
#   -k K[:RUNS]  a step count, repeatable, in increasing order
#   -r RUNS      timed runs per framework per K (default 3)
#   -b BINDIR    where the agentrt-* binaries are (default: the checkout)
#   -o FILE      also write every run's figures to FILE
#   --no-peers   agentrt only
#   --security   the agentrt agent gets "security": {} (issue 17's pipeline,
#                every detector on with its defaults); all else the same
#   --large      a large agent for all three (issue 34): 40 tools, add and
#                39 others shaped like MCP servers' tools, each with a JSON
#                Schema of about 1 KB, and a system prompt of about 4 KB.
#                bench/large-agent.py writes them once into the work dir;
#                agentrt's agent file gets them as its tools and system,
#                the peers read them from $COMPARE_AGENT.  Only add does
#                anything; the others (never called) return "ok"
#
# Needs bash, python3, curl, jq, a C compiler (cc, for bench/rusage.c),
# strace (apt-get install strace) and, unless --no-peers, node and the
# peers' packages: (cd bench/peers && npm ci).  Each run is killed after
# 120 + K seconds ($COMPARE_TIMEOUT overrides).
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

ks=() runs=3 bin= peers=1 out= security= large=
args=()
for a in "$@"; do
	case $a in
	--no-peers) peers= ;;
	--security) security=1 ;;
	--large) large=1 ;;
	--help) usage; exit 0 ;;
	*) args+=("$a") ;;
	esac
done
set -- ${args[@]+"${args[@]}"}
while getopts k:r:b:o:h opt; do
	case $opt in
	k) ks+=("$OPTARG") ;;
	r) runs=$OPTARG ;;
	b) bin=$OPTARG ;;
	o) out=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
[ ${#ks[@]} -gt 0 ] || ks=(10 100 1000)
for k in "${ks[@]}"; do
	[[ $k =~ ^[0-9]+(:[1-9][0-9]*)?$ ]] || { echo "$0: -k wants K or K:RUNS, not $k" >&2; exit 2; }
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "$0: -r wants a positive count" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${bin:-$here}" && pwd)
for b in agentrt-decide agentrt-llm agentrt-tool agentrt-session; do
	[ -x "$bin/$b" ] || { echo "$0: no $bin/$b (build agentrt, or pass -b BINDIR)" >&2; exit 2; }
done
export PATH="$bin:$PATH"
need() { command -v "$1" >/dev/null || { echo "$0: needs $1${2:+: $2}" >&2; exit 2; }; }
need python3 'apt-get install python3'
need curl 'apt-get install curl'
need jq 'apt-get install jq'
need cc 'apt-get install gcc'
need strace 'apt-get install strace'
need setsid 'apt-get install util-linux'
frameworks=(agentrt)
if [ -n "$peers" ]; then
	need node 'apt-get install nodejs npm'
	[ -d "$here/bench/peers/node_modules/@openai/agents" ] &&
	    [ -d "$here/bench/peers/node_modules/@langchain/langgraph" ] ||
	    { echo "$0: the peers are not installed: (cd bench/peers && npm ci), or --no-peers" >&2; exit 2; }
	frameworks+=(openai-agents langgraph)
fi

work=$(mktemp -d)
srv_pid=
cleanup() {
	[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -O2 -o "$work/rusage" "$here/bench/rusage.c"
mkdir -p "$work/agents" "$work/tools"
printf '.a + .b\n' >"$work/tools/add.jq"
if [ -n "$large" ]; then
	# The same system prompt and 40 tools for all three; the peers read
	# them from $COMPARE_AGENT.
	python3 "$here/bench/large-agent.py" "$work/large.json"
	jq -r '.tools[].name | select(. != "add")' "$work/large.json" |
	    while read -r name; do printf '"ok"\n' >"$work/tools/$name.jq"; done
	jq --arg sec "$security" '{model: "openai/mock-model", system, tools}
	    + if $sec != "" then {security: {}} else {} end' "$work/large.json" \
	    >"$work/agents/bench-add.json"
	export COMPARE_AGENT=$work/large.json
else
	unset COMPARE_AGENT
	jq -n --arg sec "$security" '{model: "openai/mock-model", tools: [{name: "add", description: "a+b",
	        input: {type: "object", properties: {a: {type: "number"}, b: {type: "number"}}}}]}
	        + if $sec != "" then {security: {}} else {} end' \
	    >"$work/agents/bench-add.json"
fi
export AGENTRT_AGENTS="$work/agents" OPENAI_API_KEY=sk-bench-dummy
export OPENAI_AGENTS_DISABLE_TRACING=1 LANGCHAIN_TRACING_V2=false LANGSMITH_TRACING=false
export LANGCHAIN_CALLBACKS_BACKGROUND=false

# bounded SECS CMD...: CMD in a session of its own; all of it is killed
# after SECS seconds.  Returns CMD's status (137 when killed).
bounded() {
	local secs=$1 pid wd rc=0
	shift
	setsid "$@" &
	pid=$!
	setsid bash -c 'sleep "$1"; echo "compare.sh: timed out after $1 s" >&2; kill -KILL -- "-$2"' \
	    watchdog "$secs" "$pid" 2>>"$work/stderr" &
	wd=$!
	wait "$pid" || rc=$?
	kill -- "-$wd" 2>/dev/null || true
	wait "$wd" 2>/dev/null || true
	return "$rc"
}

# serve K: the mock server with K steps on a free port; sets srv_url.
serve() {
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	MOCKLLM_HOST=127.0.0.1 MOCKLLM_LATENCY_MS=0 MOCKLLM_LOG= MOCKLLM_DUMP= \
	    python3 "$here/bench/mockllm.py" "$port" "$1" 2>>"$work/mockllm.err" &
	srv_pid=$! srv_url=http://127.0.0.1:$port
	for _ in $(seq 100); do
		curl -sf -o /dev/null "$srv_url/v1/models" && return 0
		kill -0 "$srv_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "$0: the mock server did not start:" >&2
	cat "$work/mockllm.err" >&2
	exit 1
}
unserve() { kill "$srv_pid" 2>/dev/null || true; wait "$srv_pid" 2>/dev/null || true; srv_pid=; }
reset() { curl -sf -o /dev/null -X POST "$srv_url/mock/reset"; }

# check WHAT K: the server saw one whole turn: K + 1 calls, one final.
check() {
	local s
	s=$(curl -sf "$srv_url/mock/stats")
	if [ "$(jq -c '[.chat_requests, .finals, .errors]' <<<"$s")" != "[$(($2 + 1)),1,0]" ]; then
		echo "$0: $1 did not make one whole turn of K = $2: server stats $s; its stderr:" >&2
		tail -n 30 "$work/stderr" >&2
		exit 1
	fi
}

timeout_for() { echo "${COMPARE_TIMEOUT:-$((120 + $1))}"; }

# ring K: one timed agentrt turn; prints "wall_ms cpu_ms rss_kib".
ring() {
	local k=$1 t="$work/t" fifo="$work/ring"
	rm -rf "$work/db" "$fifo" "$t".*
	mkfifo "$fifo"
	: >"$work/stderr"
	AGENTRT_DB="$work/db" OPENAI_BASE_URL=$srv_url/v1 bounded "$(timeout_for "$k")" \
	    "$work/rusage" "$t.ring" bash -c '
	    R=$1
	    $R "$2.decide" agentrt-decide <"$3" |
	    $R "$2.llm" agentrt-llm |
	    $R "$2.tool" agentrt-tool --tools "$4" |
	    $R "$2.session" agentrt-session run -a bench-add -m go >"$3"' \
	    ring "$work/rusage" "$t" "$fifo" "$work/tools" 2>>"$work/stderr" ||
	    { echo "$0: the agentrt ring failed at K = $k:" >&2; tail -n 30 "$work/stderr" >&2; exit 1; }
	# wall of the whole ring; CPU and peak RSS of the four stages, summed.
	awk 'FNR == 1 && FILENAME ~ /\.ring$/ { wall = $1; next }
	     { cpu += $2 + $3; rss += $4 }
	     END { printf "%.3f %.3f %d\n", wall / 1000, cpu / 1000, rss }' \
	    "$t.ring" "$t.decide" "$t.llm" "$t.tool" "$t.session"
}

# peer NAME K: one timed turn of bench/peers/NAME.mjs; same output.
peer() {
	local name=$1 k=$2 t="$work/t" answer
	rm -f "$t".*
	: >"$work/stderr"
	OPENAI_BASE_URL=$srv_url/v1 bounded "$(timeout_for "$k")" \
	    "$work/rusage" "$t.node" node "$here/bench/peers/$name.mjs" "$k" >"$t.out" 2>>"$work/stderr" ||
	    { echo "$0: $name failed at K = $k:" >&2; tail -n 30 "$work/stderr" >&2; exit 1; }
	answer=$(cat "$t.out")
	[ "$answer" = "done after $k steps" ] ||
	    { echo "$0: $name answered \"$answer\" at K = $k" >&2; exit 1; }
	awk '{ printf "%.3f %.3f %d\n", $1 / 1000, ($2 + $3) / 1000, $4 }' "$t.node"
}

# probe K: one untimed agentrt turn under strace, a tap on each pipe;
# prints "syncs bytes max_decision_request_line news": news, the bytes
# of every line but the model requests (llm.request, the one line that
# must carry the whole prompt).
probe() {
	local k=$1 p="$work/p" fifo="$work/ring" tap="$here/bench/tap.py"
	rm -rf "$work/db" "$fifo" "$p".*
	mkfifo "$fifo"
	: >"$work/stderr"
	AGENTRT_DB="$work/db" OPENAI_BASE_URL=$srv_url/v1 bounded "$(( 2 * $(timeout_for "$k") ))" \
	    strace -f -qq --seccomp-bpf -e trace=fsync,fdatasync,msync -o "$p.strace" bash -c '
	    python3 "$1" "$2.s2d" <"$3" | agentrt-decide |
	    python3 "$1" "$2.d2l" | agentrt-llm |
	    python3 "$1" "$2.l2t" | agentrt-tool --tools "$4" |
	    python3 "$1" "$2.t2s" | agentrt-session run -a bench-add -m go >"$3"' \
	    probe "$tap" "$p" "$fifo" "$work/tools" 2>>"$work/stderr" ||
	    { echo "$0: the probe ring failed at K = $k:" >&2; tail -n 30 "$work/stderr" >&2; exit 1; }
	# Count each call once: its first line (strace -f may split a call
	# into "<unfinished ...>" and "<... resumed>"); msync only with MS_SYNC.
	awk '$2 ~ /^(fsync|fdatasync)\(/ || ($2 ~ /^msync\(/ && /MS_SYNC/) { n++ } END { print n + 0 }' \
	    "$p.strace" | tr '\n' ' '
	jq -s -r '[(map(.bytes) | add), (.[0].types["decision.request"].max // 0),
	    (map(.bytes - (.types["llm.request"].bytes // 0)) | add)] | map(tostring) | join(" ")' \
	    "$p.s2d" "$p.d2l" "$p.l2t" "$p.t2s"
	for pipe in s2d d2l l2t t2s; do
		jq -c --arg p "$pipe" '{pipe: $p, bytes, lines, max_line}' "$p.$pipe"
	done >"$work/pipes.$k"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

note=
[ -z "$security" ] || note=' (with "security": {})'
[ -z "$large" ] || note="$note; the large agent: $(jq -r '"\(.tools | length) tools, \(.tools | map(.input | tojson | length) | add) bytes of schemas, a \(.system | length)-byte system prompt"' "$work/large.json")"
echo "agentrt: $bin$note${peers:+; node $(node --version)}; $(nproc) CPUs" >&2
: >"$work/runs"
kl=()
for spec in "${ks[@]}"; do
	k=${spec%%:*} r=$runs
	[ "$k" = "$spec" ] || r=${spec#*:}
	kl+=("$k")
	serve "$k"
	for i in $(seq 1 "$r"); do
		for fw in "${frameworks[@]}"; do
			reset
			if [ "$fw" = agentrt ]; then f=$(ring "$k"); else f=$(peer "$fw" "$k"); fi
			check "$fw" "$k"
			echo "$fw $k $i $f" >>"$work/runs"
			echo "K=$k run $i/$r $fw: wall ms, cpu ms, rss KiB = $f" >&2
		done
	done
	reset
	f=$(probe "$k")
	check "agentrt under strace" "$k"
	echo "$k $f" >>"$work/probe"
	echo "K=$k probe: syncs, ring bytes, largest decision.request = $f" >&2
	unserve
done
[ -z "$out" ] || {
	echo "# framework K run wall_ms cpu_ms rss_kib  (probe: K syncs bytes max_decision_request)"
	cat "$work/runs"
	sed 's/^/probe /' "$work/probe"
	cat "$work"/pipes.*
} >"$out"

# The table: one row per framework per K, from the medians.
printf '\n%-14s %5s %4s %10s %21s %9s %9s %8s %8s %9s %9s %10s\n' framework K runs wall_ms \
    'wall range' step_ms wall/K cpu_ms rss_MiB fsync/K bytes/K max_dreq
: >"$work/med"
for fw in "${frameworks[@]}"; do
	pk= pw=
	for k in "${kl[@]}"; do
		sel() { awk -v f="$fw" -v k="$k" -v c="$1" '$1 == f && $2 == k { print $c }' "$work/runs"; }
		w=$(sel 4 | median) c=$(sel 5 | median) m=$(sel 6 | median) n=$(sel 4 | wc -l)
		lo=$(sel 4 | sort -g | head -n 1) hi=$(sel 4 | sort -g | tail -n 1)
		if [ -n "$pk" ]; then
			step=$(awk -v a="$w" -v b="$pw" -v n=$((k - pk)) 'BEGIN { printf "%.2f", (a - b) / n }')
		else
			step=-
		fi
		if [ "$fw" = agentrt ]; then
			read -r syncs bytes dreq news < <(awk -v k="$k" '$1 == k { print $2, $3, $4, $5 }' "$work/probe")
			fk=$(awk -v s="$syncs" -v k="$k" 'BEGIN { printf "%.1f", s / k }')
			bk=$(awk -v s="$bytes" -v k="$k" 'BEGIN { printf "%.0f", s / k }')
		else
			fk=- bk=- dreq=- bytes=- news=-
		fi
		printf '%-14s %5d %4d %10.1f %21s %9s %9.2f %8.1f %8.1f %9s %9s %10s\n' "$fw" "$k" "$n" "$w" \
		    "$(printf '%.1f..%.1f' "$lo" "$hi")" "$step" "$(awk -v w="$w" -v k="$k" 'BEGIN { print w / k }')" \
		    "$c" "$(awk -v m="$m" 'BEGIN { print m / 1024 }')" "$fk" "$bk" "$dreq"
		echo "$fw $k $w $c $m $bytes $news" >>"$work/med"
		pk=$k pw=$w
	done
done

# The ratios.
echo
awk -v kl="${kl[*]}" -v peers="$peers" '
	{ w[$1, $2] = $3; rss[$1, $2] = $5; b[$1, $2] = $6; nb[$1, $2] = $7; fw[$1] = 1 }
	END {
		nk = split(kl, K, " "); lo = K[1]; hi = K[nk]
		if (peers) for (i = 1; i <= nk; i++) {
			k = K[i]; best = ""
			for (f in fw) if (f != "agentrt" && (best == "" || w[f, k] < w[best, k])) best = f
			printf "K=%-5d agentrt wall / fastest peer (%s): %.2fx  (%.1f ms / %.1f ms)\n",
			    k, best, w["agentrt", k] / w[best, k], w["agentrt", k], w[best, k]
		}
		if (nk > 1) for (f in fw)
			printf "%-14s wall/K at K=%d / at K=%d: %.2fx  (%.2f / %.2f ms a step)\n", f, hi, lo,
			    (w[f, hi] / hi) / (w[f, lo] / lo), w[f, hi] / hi, w[f, lo] / lo
		mk = lo
		for (i = 1; i <= nk; i++) if (K[i] == 100) mk = 100
		if (peers) for (f in fw) if (f != "agentrt")
			printf "K=%-5d agentrt ring RSS (4 processes summed) / %s RSS: %.2fx  (%.1f / %.1f MiB)\n",
			    mk, f, rss["agentrt", mk] / rss[f, mk], rss["agentrt", mk] / 1024, rss[f, mk] / 1024
		if (nk > 1)
			printf "agentrt ring bytes/K at K=%d / at K=%d: %.1fx  (%.0f / %.0f bytes a step)\n", hi, lo,
			    (b["agentrt", hi] / hi) / (b["agentrt", lo] / lo), b["agentrt", hi] / hi, b["agentrt", lo] / lo
		if (nk > 1)
			printf "agentrt ring bytes/K but the model requests, at K=%d / at K=%d: %.2fx  (%.0f / %.0f bytes a step)\n",
			    hi, lo, (nb["agentrt", hi] / hi) / (nb["agentrt", lo] / lo), nb["agentrt", hi] / hi,
			    nb["agentrt", lo] / lo
	}' "$work/med"
