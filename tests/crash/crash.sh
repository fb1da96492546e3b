#!/usr/bin/env bash
# crash.sh - kill -9 a K-step tool loop ring at named points, resume it,
# and count what the store lost or doubled (issue 18; see README.md).
#
# Each trial runs a fresh store: a mock/script agent calls the tool
# tests/crash/tools/effect K times and then answers.  The ring is the one
# tests/e2e/lib.bash builds, decide | llm | tool | session run over a
# fifo, in a process group of its own.  At a random moment one process
# is killed with SIGKILL; then `agentrt-session run -s ID` (no input) is
# run again until the turn is done, five times at most.  What the store
# kept (agentrt-session log, agentrt-tree path) and what the tool did
# (its effects file) are then compared with a clean run's shape.

set -u

prog=crash.sh
ALL_POINTS="llm tool tool-child decide engine ring recovery commit"

usage() {
	cat <<EOF
Usage: $prog [-n TRIALS] [-k STEPS] [-p POINT]... [--seed N] [--keep]
             [--json] [--trials FILE] [--retries N]

Kill -9 trials of a STEPS-step tool loop ring at named points, each
followed by 'agentrt-session run -s ID' until the turn is done, and per
point: trials, kills that landed, turns resumed, lost records,
duplicated messages, duplicated tool effects (allowed: the kill landed
while that call's tool ran; other), and results lost (a tool that
finished, recorded as an error).

Options:
  -n TRIALS      trials in all, shared round-robin by the points (40)
  -k STEPS       tool calls per turn (8; twice as many at commit)
  -p POINT       a kill point, repeatable (default: all of them):
                 $ALL_POINTS
      --seed N   seed of the random kill times (default: the pid)
      --keep     keep the stores of failed trials, and say where
      --json     NDJSON, a line per point and one for all, not a table
      --trials FILE  each trial's findings to FILE, a line each
      --retries N  max_retries of the agent's calls, tools and model
                 alike (default: each kind's own, 0 for a tool, 4 for a
                 model call)
  -h, --help     this help
EOF
}

die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 1
}

usage_err() {
	printf '%s: %s\n' "$prog" "$1" >&2
	usage >&2
	exit 2
}

trials=40 k=8 seed=$$ keep=0 json=0 retries= points= trials_file=
while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || usage_err "-n needs a number"; trials=$2; shift ;;
	-k) [ $# -ge 2 ] || usage_err "-k needs a number"; k=$2; shift ;;
	-p) [ $# -ge 2 ] || usage_err "-p needs a point"
	    case " $ALL_POINTS " in
	    *" $2 "*) points="$points $2" ;;
	    *) usage_err "unknown point '$2': use one of $ALL_POINTS" ;;
	    esac
	    shift ;;
	--seed) [ $# -ge 2 ] || usage_err "--seed needs a number"
	    seed=$2; shift ;;
	--retries) [ $# -ge 2 ] || usage_err "--retries needs a number"
	    retries=$2; shift ;;
	--trials) [ $# -ge 2 ] || usage_err "--trials needs a file"
	    trials_file=$2; shift ;;
	--keep) keep=1 ;;
	--json) json=1 ;;
	-h|--help) usage; exit 0 ;;
	*) usage_err "unknown argument '$1'" ;;
	esac
	shift
done
for v in trials k seed ${retries:+retries}; do
	[[ ${!v} =~ ^[0-9]+$ ]] || usage_err "bad $v '${!v}': a whole number"
done
[ "$trials" -ge 1 ] || usage_err "-n: at least one trial"
[ "$k" -ge 1 ] || usage_err "-k: at least one step"
points=${points:-$ALL_POINTS}
read -r -a points <<<"$points"

for c in jq setsid pgrep; do
	command -v "$c" >/dev/null || die "no $c: it is needed to run the trials"
done

here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
export PATH="$top_builddir:$PATH"
for c in agentrt-session agentrt-decide agentrt-llm agentrt-tool agentrt-tree; do
	command -v "$c" >/dev/null || die "no $c: build agentrt first (make)"
done
unset AGENTRT_TOOLS AGENTRT_CLOCK AGENTRT_ID_SEED AGENTRT_SYNC NO_COLOR
export LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/crash.XXXXXX") || die "no temporary directory"
kept=0
cleanup() {
	[ "$keep" = 1 ] && [ "$kept" -gt 0 ] && return
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

RANDOM=$seed

# rand LO HI: a whole number from LO to HI.
rand() {
	echo $(( $1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1) ))
}

# sleep_ms MS
sleep_ms() {
	sleep "$(( $1 / 1000 )).$(printf %03d $(( $1 % 1000 )))"
}

# now_ms: the wall clock in milliseconds.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $(( t / 1000 ))
}

# The agents: "loop" naps in each tool call and model call, so that kills
# land in either; "heavy" (the commit point) does not nap at all and pads
# every result, so the engine is mostly writing the store.
agents() {
	local name=$1 delay=$2 k=$3
	jq -n --argjson k "$k" --argjson d "$delay" '
	    [range($k) | {tool_calls: [{name: "effect", arguments: {i: .}}],
	     delay_ms: $d}] + [{content: "done after \($k) steps"}]' \
	    >"$work/script-$name.json"
	# No backoff, so that a retry does not wait.  A RetryPolicy is whole
	# (the seed's four members), so it holds for tools and model calls
	# alike: four retries, a model call's default, unless given.
	jq -n --arg f "$work/script-$name.json" --arg r "$retries" '
	    {model: "mock/script",
	     retry: {timeout_secs: 180, backoff_base_secs: 0, backoff_max_secs: 0,
	      max_retries: (if $r == "" then 4 else ($r | tonumber) end)},
	     tools: [{name: "effect", description: "Appends its call id"}],
	     mock: {script_file: $f}}' >"$work/agents/$name.json"
}
mkdir -p "$work/agents"
# The commit point's turns are twice as long, so that more of the time is
# spent writing.
steps_loop=$k steps_heavy=$((2 * k))
agents loop 20 "$steps_loop"
agents heavy 0 "$steps_heavy"

# trial_env DIR AGENT: the environment of a trial in DIR.
trial_env() {
	local t=$1
	mkdir -p "$t/running"
	: >"$t/effects"; : >"$t/at-kill"; : >"$t/killed"; : >"$t/unkept"
	export AGENTRT_DB="$t/db" AGENTRT_AGENTS="$work/agents"
	export CRASH_EFFECTS="$t/effects" CRASH_RUNNING="$t/running"
	export HOME="$t" TMPDIR="$t"
	if [ "$2" = heavy ]; then
		export CRASH_NAP=0 CRASH_PAD=65536
	else
		export CRASH_NAP=0.1 CRASH_PAD=0
	fi
}

# start_ring DIR RUN-ARGS...: the ring in the background, in a process
# group of its own led by $ring (the bash that waits for the stages).
start_ring() {
	local t=$1
	shift
	rm -f "$t/fifo"
	mkfifo "$t/fifo"
	setsid bash -c '
		t=$1 tools=$2; shift 2
		agentrt-decide <"$t/fifo" 2>>"$t/stages.err" |
		agentrt-llm 2>>"$t/stages.err" |
		agentrt-tool --tools "$tools" --env CRASH_EFFECTS \
		    --env CRASH_RUNNING --env CRASH_NAP --env CRASH_PAD \
		    2>>"$t/stages.err" |
		agentrt-session run "$@" >"$t/fifo" 2>>"$t/session.err"
	' ring "$t" "$here/tools" "$@" </dev/null >/dev/null 2>>"$t/ring.err" &
	ring=$!
	# Until setsid(2), the child is in our group: wait for its own.
	local i pg
	for (( i = 0; i < 200; i++ )); do
		{ read -r _ _ _ _ pg _ <"/proc/$ring/stat"; } 2>/dev/null ||
		    return 0
		[ "$pg" = "$ring" ] && return
		sleep 0.005
	done
	die "the ring is not in a process group of its own"
}

# ring_alive: the ring's leader has not exited (a zombie has: it still
# holds the group id, so the group can be killed safely until reaped).
ring_alive() {
	local st
	{ read -r _ _ st _ <"/proc/$ring/stat"; } 2>/dev/null || return 1
	[ "$st" != Z ]
}

# wait_ring SECS: waits for the ring to end, kills what is left of its
# group after SECS, and sets rc to the ring's status and ring_end to the
# time (ms) its end was seen.
wait_ring() {
	local i
	for (( i = 0; i < $1 * 100; i++ )); do
		ring_alive || break
		sleep 0.01
	done
	ring_end=$(now_ms)
	kill -9 -- "-$ring" 2>/dev/null
	wait "$ring"
	rc=$?
	# The stages may outlive their leader by a moment (SIGKILL waits for
	# a write to the disk to end): the next run would find its session
	# still driven.
	for (( i = 0; i < 500; i++ )); do
		[ -z "$(pgrep -g "$ring")" ] && return
		sleep 0.02
	done
}

# note_unkept DIR: the calls the tool outbox holds claimed with no result
# kept, to DIR/unkept, read from the store once the ring is gone.  Such
# a call was still running as far as its stage goes (its tool may have
# exited, but the stage died before it kept the result): the contract
# lets it be interrupted, so its error is not a result lost.
note_unkept() {
	mdb_dump -p -s outbox "$1/db" 2>/dev/null | awk '
	    /^ / && !val { key = $0; val = 1; next }
	    /^ / && val { if ($0 ~ /"state":"running"/ &&
	        match(key, /call_[A-Za-z0-9_]+/))
	            print substr(key, RSTART, RLENGTH)
	        val = 0 }' >>"$1/unkept"
}

# stage NAME: the pid of the ring's stage NAME, or nothing.
stage() {
	pgrep -g "$ring" -x "$1" | head -1
}

# note_running DIR: the calls whose tool runs now, to DIR/at-kill.
note_running() {
	local f pid
	for f in "$1"/running/*; do
		[ -e "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null)
		if [ -z "$pid" ] || kill -0 "$pid" 2>/dev/null; then
			f=${f##*/}
			echo "${f%.*}" >>"$1/at-kill"
		fi
	done
}

# running_tool DIR: "PID CALL" of a tool that runs now, or nothing.
running_tool() {
	local f pid
	for f in "$1"/running/*; do
		[ -e "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null)
		[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || continue
		f=${f##*/}
		echo "$pid ${f%.*}"
		return
	done
}

# kill_point DIR POINT MS: after MS milliseconds, SIGKILL what POINT
# names.  Counts it in $landed when there was something to kill.
kill_point() {
	local t=$1 point=$2 ms=$3 pid= call i
	[ "$point" = tool-child ] || sleep_ms "$ms"
	case $point in
	llm) pid=$(stage agentrt-llm) ;;
	tool) pid=$(stage agentrt-tool) ;;
	decide) pid=$(stage agentrt-decide) ;;
	engine|recovery|commit) pid=$(stage agentrt-session) ;;
	ring)
		ring_alive || return 0
		note_running "$t"
		kill -9 -- "-$ring" 2>/dev/null && landed=$((landed + 1))
		return 0 ;;
	tool-child)
		# The next tool to run, killed part way through its nap.
		sleep_ms "$(rand 0 $((ms / 2)))"
		for (( i = 0; i < 500; i++ )); do
			read -r pid call <<<"$(running_tool "$t")"
			[ -n "$pid" ] && break
			ring_alive || return 0
			sleep 0.01
		done
		[ -n "$pid" ] || return 0
		sleep_ms "$(rand 0 80)"
		note_running "$t"
		kill -9 "$pid" 2>/dev/null || return 0
		echo "$call" >>"$t/killed"
		landed=$((landed + 1))
		return 0 ;;
	esac
	[ -n "$pid" ] || return 0
	note_running "$t"
	kill -9 "$pid" 2>/dev/null && landed=$((landed + 1))
	return 0
}

# turn_state ID: done, started or none, from the log.
turn_state() {
	agentrt-session log "$1" 2>/dev/null | jq -rs '
	    if any(.[]; .payload.type == "turn.completed") then "done"
	    elif any(.[]; .payload.type == "turn.started") then "started"
	    else "none" end'
}

# wait_tools DIR: waits (5 s at most) for tools a killed ring left
# running to end, so that their effects are in.
wait_tools() {
	local i
	for (( i = 0; i < 250; i++ )); do
		[ -z "$(running_tool "$1")" ] && return
		sleep 0.02
	done
}

# clean AGENT: three runs with no kill, each checked; prints the time of
# the fastest in ms (the kills are drawn within it), or fails.
clean() {
	local t id t0 bad n ms best=
	for n in 1 2 3; do
		t="$work/clean-$1-$n"
		trial_env "$t" "$1"
		id=$(agentrt-session new -a "$1") ||
		    die "agentrt-session new failed"
		t0=$(now_ms)
		start_ring "$t" -s "$id" -m go
		wait_ring 120
		ms=$(( ring_end - t0 ))
		[ "$rc" -eq 0 ] || die "a clean run of $1 failed ($rc):" \
		    "$(tail -3 "$t/session.err" "$t/stages.err")"
		bad=$(judge "$t" "$id" "$1" | jq -r '[.lost_records,
		    .duplicated_messages, .duplicated_effects, .results_lost]
		    | add')
		[ "$bad" = 0 ] || die "a clean run of $1 is not the shape it" \
		    "should be: $(judge "$t" "$id" "$1")"
		[ "$(wc -l <"$t/effects")" -eq "$(steps "$1")" ] ||
		    die "a clean run of $1 ran the tool $(wc -l <"$t/effects")" \
		    "times, not $(steps "$1")"
		[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
		rm -rf "$t"
	done
	echo "$best"
}

# steps AGENT: the tool calls of AGENT's turn.
steps() {
	local v="steps_$1"
	echo "${!v}"
}

# judge DIR ID AGENT: the trial's findings, a JSON object.
judge() {
	local t=$1 id=$2 k
	k=$(steps "$3")
	agentrt-tree path "$id" >"$t/path.ndjson" 2>/dev/null
	agentrt-session log "$id" >"$t/log.ndjson" 2>/dev/null
	jq -n -c --argjson k "$k" --slurpfile p "$t/path.ndjson" \
	    --rawfile eff "$t/effects" --rawfile atkill "$t/at-kill" \
	    --rawfile killed "$t/killed" --rawfile unkept "$t/unkept" '
	def lines($s): $s | split("\n") | map(select(length > 0));
	def has($a; $x): $a | index([$x]) != null;
	[$p[] | select(.role == "tool") | .tool_call_id] as $res
	| ($res | unique) as $ures
	| [$p[] | select(.role == "assistant") | .tool_calls[]?.id] as $asked
	| [$asked[] | select(has($ures; .) | not)] as $unanswered
	| (if any($p[]; .role == "user") then 0 else 1 end) as $nouser
	| (if any($p[]; .role == "assistant" and
	    .content == "done after \($k) steps") then 0 else 1 end) as $nofinal
	| ([$p[] | .id] | group_by(.) | map(select(length > 1)) | length)
	    as $dupids
	| ($res | group_by(.) | map(select(length > 1)) | length) as $dupres
	| (lines($eff) | map(split(" ")[0])) as $effects
	| (lines($atkill) | unique) as $running
	| (lines($killed) | unique) as $killedc
	| (lines($unkept) | unique) as $unkeptc
	| [$effects | group_by(.)[] | select(length > 1) | .[0]] as $dups
	| [$p[] | select(.role == "tool") | {(.tool_call_id): .content}] | add
	    // {} | . as $content
	| [$effects | unique[] | select(has($killedc; .) | not)
	    # A tool still running at the kill had not answered: it was
	    # interrupted (the contract allows it), not a result lost.
	    | select(has($running; .) | not)
	    # Nor was one whose tool had exited but whose result its stage
	    # had not kept when it died.
	    | select(has($unkeptc; .) | not)
	    | select($content[.] != null and
	      ($content[.] | tostring | startswith("effect ") | not))]
	    as $rlost
	| {lost_records: ((([$k - ($ures | length), ($unanswered | length)]
	      | max) | if . < 0 then 0 else . end) + $nouser + $nofinal),
	   duplicated_messages: ($dupids + $dupres),
	   # A call runs again only as the contract lets it: its tool ran
	   # at the kill, or had exited with its result not yet kept.
	   duplicated_effects_allowed: [$dups[] | select(has($running; .) or
	      has($unkeptc; .))] | length,
	   duplicated_effects: [$dups[] | select((has($running; .) or
	      has($unkeptc; .)) | not)] | length,
	   results_lost: ($rlost | length),
	   lost_results: [$rlost[] | {call: ., result: $content[.]}]}'
}

# trial N POINT: one trial; prints its findings as a JSON line.
trial() {
	local n=$1 point=$2 t="$work/trial-$1" agent=loop id dur state
	local resumes=0 resumed=false cut=false args
	landed=0
	[ "$point" = commit ] && agent=heavy
	dur=$clean_loop
	[ "$agent" = heavy ] && dur=$clean_heavy
	trial_env "$t" "$agent"
	id=$(agentrt-session new -a "$agent") || die "agentrt-session new failed"
	start_ring "$t" -s "$id" -m go
	kill_point "$t" "$point" "$(rand $((dur * 3 / 100)) $((dur * 85 / 100)))"
	wait_ring 60
	note_unkept "$t"
	[ "$(turn_state "$id")" = done ] || cut=true
	while :; do
		state=$(turn_state "$id")
		[ "$state" = done ] && { resumed=true; break; }
		[ "$resumes" -lt 5 ] || break
		resumes=$((resumes + 1))
		# A message the kill kept from being recorded is sent again.
		args=()
		[ "$state" = none ] && args=(-m go)
		start_ring "$t" -s "$id" "${args[@]}"
		[ "$point" = recovery ] && [ "$resumes" = 1 ] &&
		    kill_point "$t" engine "$(rand 10 $((dur / 2)))"
		wait_ring 60
		note_unkept "$t"
	done
	wait_tools "$t"
	judge "$t" "$id" "$agent" | jq -c --arg point "$point" --argjson n "$n" \
	    --argjson landed "$landed" --argjson cut "$cut" \
	    --argjson resumed "$resumed" \
	    --argjson resumes "$resumes" --arg id "$id" --arg dir "$t" '
	    {point: $point, trial: $n, session: $id, kills: $landed,
	     cut: $cut, resumed: $resumed, resumes: $resumes} + .
	    | .failed = (.resumed == false or .lost_records > 0 or
	        .duplicated_messages > 0 or .duplicated_effects > 0 or
	        .results_lost > 0)
	    | if .failed then .dir = $dir else . end'
}

clean_loop=$(clean loop) || exit 1
clean_heavy=$(clean heavy) || exit 1

results="$work/results.ndjson"
: >"$results"
for (( i = 0; i < trials; i++ )); do
	p=${points[i % ${#points[@]}]}
	line=$(trial "$i" "$p") || exit 1
	printf '%s\n' "$line" >>"$results"
	if [ "$(jq -r .failed <<<"$line")" = true ] && [ "$keep" = 1 ]; then
		kept=$((kept + 1))
	else
		rm -rf "$work/trial-$i"
	fi
done

[ -z "$trials_file" ] || cp "$results" "$trials_file" ||
    die "cannot write '$trials_file'"

summary() {
	jq -s -c --arg order "${points[*]}" '
	def sum(f): map(f) | add;
	def row($p): {point: $p, trials: length, kills: sum(.kills),
	    cut: map(select(.cut)) | length,
	    resumed: map(select(.resumed)) | length,
	    lost_records: sum(.lost_records),
	    duplicated_messages: sum(.duplicated_messages),
	    duplicated_effects_allowed: sum(.duplicated_effects_allowed),
	    duplicated_effects: sum(.duplicated_effects),
	    results_lost: sum(.results_lost)};
	. as $all
	| ($order | split(" ")) as $ps
	| ($ps[] as $p | $all | map(select(.point == $p))
	    | select(length > 0) | row($p)),
	  ($all | row("all"))' "$results"
}

if [ "$json" = 1 ]; then
	summary
else
	printf 'K=%s steps, %s trials, seed %s, max_retries %s; clean run %s ms (commit: %s ms)\n' \
	    "$k" "$trials" "$seed" "${retries:-default}" "$clean_loop" \
	    "$clean_heavy"
	printf '%-11s %6s %5s %4s %7s %5s %8s %13s %8s\n' point trials \
	    kills cut resumed lost dup-msgs 'dup-eff(ok/no)' res-lost
	summary | jq -r '[.point, .trials, .kills, .cut, .resumed,
	    .lost_records,
	    .duplicated_messages,
	    "\(.duplicated_effects_allowed)/\(.duplicated_effects)",
	    .results_lost] | @tsv' |
	while IFS=$'\t' read -r a b c d e f g h i; do
		printf '%-11s %6s %5s %4s %7s %5s %8s %13s %8s\n' \
		    "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" "$i"
	done
fi
if [ "$kept" -gt 0 ]; then
	printf '%s: the stores of %d failed trials are kept under %s\n' \
	    "$prog" "$kept" "$work" >&2
fi
exit 0
