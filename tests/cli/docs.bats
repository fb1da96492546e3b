#!/usr/bin/env bats
# docs.bats - the manual pages and completions agree with --help

load lib

bashcomp=$top_srcdir/completions/agentrt.bash
zshcomp=$top_srcdir/completions/_agentrt
fishcomp=$top_srcdir/completions/agentrt.fish

# The binaries that must be built.
ready_bins="agentrt-session agentrt-decide agentrt-llm agentrt-tool agentrt-tree
    agentrt-shell agentrt-bus agentrt-serve"

# Prints the agentrt binaries built in top_builddir, one per line.
built_bins() {
	local b
	for b in agentrt-session agentrt-decide agentrt-llm agentrt-tool \
	    agentrt-tree agentrt-shell agentrt-bus agentrt-serve; do
		if [ -x "$top_builddir/$b" ]; then
			echo "$b"
		fi
	done
}

# Prints the options of BIN --help, one "--long TAGS" line each.  TAGS are
# the commands an agentrt-session option is for, from the "(new, run)" its
# description starts with, joined by commas, or - when it names none.
help_options() {
	local text line name= desc tags
	local re='^ +(-[A-Za-z], +)?(--[a-z][a-z0-9-]*)( [A-Z]+)*( +(.*))?$'
	text=$("$1" --help) || return 1
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			[ -z "$name" ] || printf '%s -\n' "$name"
			name=${BASH_REMATCH[2]}
			[ -n "${BASH_REMATCH[4]}" ] || continue
			desc=${BASH_REMATCH[5]}
		elif [ -n "$name" ]; then
			# The description of a long option starts on the next line.
			desc=${line#"${line%%[! ]*}"}
		else
			continue
		fi
		tags=-
		if [[ $desc =~ ^\(([a-z]+(, [a-z]+)*)\) ]]; then
			tags=${BASH_REMATCH[1]//, /,}
		fi
		printf '%s %s\n' "$name" "$tags"
		name=
	done <<<"$text"
	[ -z "$name" ] || printf '%s -\n' "$name"
}

# Prints the long options of BIN --help, one per line.
help_longopts() {
	local out
	out=$(help_options "$1") || return 1
	cut -d' ' -f1 <<<"$out"
}

# Prints the commands listed under "Commands:" in agentrt-session --help.
help_commands() {
	local text
	text=$(agentrt-session --help) || return 1
	sed -n '/^Commands:/,/^$/p' <<<"$text" | awk '/^  [a-z]/ { print $1 }'
}

# Prints the places where a binary's options are completed: "" for the
# start of the line, and for agentrt-session each of its commands.
contexts() {
	echo ""
	if [ "$1" = agentrt-session ]; then
		help_commands
	fi
}

# context_opts BIN CMD: the long options completion must offer after BIN CMD
# (CMD empty: right after BIN).  Before an agentrt-session command, those
# for no command in particular; after it, those for that command, and the
# ones for none but --help and --version.
context_opts() {
	local out name tags
	out=$(help_options "$1") || return 1
	while read -r name tags; do
		if [ -z "$2" ]; then
			[ "$tags" != - ] || echo "$name"
		elif [ "$tags" = - ]; then
			case $name in
			--help|--version) ;;
			*) echo "$name" ;;
			esac
		elif [[ ",$tags," == *",$2,"* ]]; then
			echo "$name"
		fi
	done <<<"$out"
}

# Prints section NAME (.Sh NAME up to the next .Sh) of man page PAGE.
man_section() {
	awk -v s=".Sh $2" '$0 == s { on = 1; next } /^\.Sh / { on = 0 }
	    on' "$1"
}

# Runs the bash completion for the words given, the last being the one under
# the cursor, and prints COMPREPLY one per line.  It finds the function the
# way bash does, through complete -p.
bash_complete() {
	bash -c '
		source "$1" || exit 3
		shift
		fn=$(complete -p "$1" | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
		[ -n "$fn" ] || exit 4
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$bashcomp" "$@"
}

# Prints what zsh offers on TAB at the end of the line given, one match per
# line: an interactive zsh on a pseudo-terminal (zsh/zpty) loads the
# completion with compinit, and a compadd wrapper prints the matches
# between two NUL lines.  The line goes with its newline, bound to nothing
# here: sent without one, the line did not reach zle as typed.
zsh_complete() {
	local dir=$BATS_TEST_TMPDIR/zsh
	mkdir -p "$dir"
	cat >"$dir/init.zsh" <<-'EOF'
	PROMPT= RPROMPT=
	fpath=("$ZCOMPDIR" $fpath)
	autoload -Uz compinit
	compinit -u -D
	bindkey '^I' complete-word
	bindkey '^M' undefined
	bindkey '^J' undefined
	zstyle ':completion:*' insert-tab false
	null_line() { print -r -- $'\0' }
	compprefuncs=(null_line)
	comppostfuncs=(null_line exit)
	compadd() {
		if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
			builtin compadd "$@"
			return
		fi
		local -a __hits
		builtin compadd -A __hits "$@"
		(( $#__hits )) && print -rl -- $__hits
		builtin compadd "$@"
	}
	print ready
	EOF
	cat >"$dir/drive.zsh" <<-'EOF'
	zmodload zsh/zpty || exit 3
	zpty z zsh -f -i
	zpty -w z "source ${(q)1}"
	local line
	repeat 20; do
		zpty -r z line || exit 4
		[[ $line == ready* ]] && break
	done
	zpty -w z "$2"$'\t'
	integer seen=0
	while zpty -r z line; do
		line=${line//$'\r'/}
		line=${line%$'\n'}
		if [[ $line == *$'\0' ]]; then
			(( seen++ )) && exit 0
			continue
		fi
		(( seen )) && print -r -- "$line"
	done
	exit 5
	EOF
	ZCOMPDIR=$(dirname "$zshcomp") timeout 20 \
	    zsh -f "$dir/drive.zsh" "$dir/init.zsh" "$1" | sort -u
}

# Prints what fish offers at the end of the line given, one match per line.
fish_complete() {
	fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
	    "$fishcomp" "$1" | cut -f1
}

needs_zsh() {
	command -v zsh >/dev/null || skip "zsh is not installed"
	zsh -fc 'zmodload zsh/zpty' 2>/dev/null || skip "zsh has no zpty"
}

needs_fish() {
	command -v fish >/dev/null || skip "fish is not installed"
}

# Fails, naming them, if any arguments were given: the things found missing.
none_missing() {
	if [ "$#" -gt 0 ]; then
		printf 'missing: %s\n' "$*" >&2
		return 1
	fi
}

# check_offered SHELL: for every built binary and every place it takes
# options, what SHELL offers for the line "BIN [CMD] --" (bash: "-")
# includes every long option --help gives for that place.
check_offered() {
	local sh=$1 bin cmd opt offered missing=()
	for bin in $(built_bins); do
		while IFS= read -r cmd; do
			case $sh in
			bash) offered=$(bash_complete "$bin" ${cmd:+"$cmd"} -) ;;
			zsh) offered=$(zsh_complete "$bin ${cmd:+$cmd }--") ;;
			fish) offered=$(fish_complete "$bin ${cmd:+$cmd }--") ;;
			esac
			for opt in $(context_opts "$bin" "$cmd"); do
				grep -qxF -- "$opt" <<<"$offered" ||
				    missing+=("$sh:$bin${cmd:+ $cmd}:$opt")
			done
		done < <(contexts "$bin")
	done
	none_missing "${missing[@]}"
}

# Agent files where agentrt-session run looks for them: given/ for
# --agents, env1/ and env2/ for $AGENTRT_AGENTS, the XDG directory and
# work/agents, work/ being the current directory; given/ also holds a file
# and a directory that are not agents.  Only given/ is made unless "all" is
# given.  Leaves the shell in work/.
make_agents() {
	local a agents=(given/alpha given/beta)
	cd "$BATS_TEST_TMPDIR"
	mkdir -p given/subdir.json work
	: >given/notes.txt
	if [ "${1-}" = all ]; then
		agents+=(env1/gamma env2/delta work/agents/zeta
		    "$XDG_CONFIG_HOME/agentrt/agents/epsilon")
	fi
	for a in "${agents[@]}"; do
		mkdir -p "${a%/*}"
		echo '{"model":"mock/echo"}' >"$a.json"
	done
	cd work
}

@test "--help lists the options and commands the other checks rely on" {
	local bin
	run built_bins
	[ "$status" -eq 0 ]
	for bin in $ready_bins; do
		[[ " ${lines[*]} " == *" $bin "* ]] || fail "$bin is not built"
	done
	for bin in $(built_bins); do
		run help_longopts "$bin"
		[ "$status" -eq 0 ]
		[[ " ${lines[*]} " == *" --help "* ]] || fail "$bin: ${lines[*]}"
		[[ " ${lines[*]} " == *" --version "* ]] ||
		    fail "$bin: ${lines[*]}"
		# No option is missed: every --word in --help is one of them.
		[ "$(printf '%s\n' "${lines[@]}" | sort)" = \
		    "$("$bin" --help | grep -oE -- '--[a-z][a-z0-9-]*' |
			sort -u)" ] || fail "$bin: options missed: ${lines[*]}"
	done
	run help_commands
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "new ls show request log rm cancel export import checkpoint restore replay run serve" ]
	run help_options agentrt-session
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 16 ]
	[[ " ${lines[*]} " == *" --db - "* ]]
	[[ " ${lines[*]} " == *" --agent new,run "* ]]
	[[ " ${lines[*]} " == *" --identity new "* ]]
	[[ " ${lines[*]} " == *" --session run "* ]]
	[[ " ${lines[*]} " == *" --max-line run,serve "* ]]
	run context_opts agentrt-session log
	[ "${lines[*]}" = "--db --after --follow" ]
	run help_longopts agentrt-decide
	[[ " ${lines[*]} " == *" --slurpfile "*" --max-line "* ]]
}

@test "BIN --completions lists exactly the long options of BIN --help" {
	local bin want got
	for bin in $(built_bins); do
		want=$(help_longopts "$bin" | sort)
		run "$bin" --completions
		[ "$status" -eq 0 ] || fail "$bin --completions: $status"
		got=$(printf '%s\n' "${lines[@]}" | awk -F '\t' '/^--/ { print $1 }' |
		    sort)
		[ -n "$want" ] && [ "$got" = "$want" ] ||
		    fail "$bin: --help has $want; --completions has $got"
		# Seven tab-separated fields an option.
		printf '%s\n' "${lines[@]}" | awk -F '\t' '/^--/ && NF != 7 {
		    bad = 1 } END { exit bad }' || fail "$bin: a bad line"
	done
	# The commands, in the order of --help, and what each takes.
	run agentrt-session --completions
	got=$(printf '%s\n' "${lines[@]}" | awk -F '\t' '!/^-/ { print $1 }')
	[ "$got" = "$(help_commands)" ]
	printf '%s\n' "${lines[@]}" | grep -qx $'rm\tsession...\t.*'
	# A command narrows the options to those it takes, as --help says.
	run agentrt-session --completions log
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -f1 | tr '\n' ' ')" = \
	    "--db --after --follow --help --version " ]
	run agentrt-tree --completions export
	[ "$(printf '%s\n' "${lines[@]}" | cut -f1 | tr '\n' ' ')" = \
	    "--db --format --help --version " ]
	run agentrt-session --completions bogus
	[ "$status" -eq 2 ]
	[[ $output == *"unknown command 'bogus'"* ]]
	run agentrt-llm --completions bogus
	[ "$status" -eq 2 ]
	[[ $output == *"usage: agentrt-llm"* ]]
	run agentrt-decide --completions
	[[ " ${lines[*]} " == *$' --slurpfile\t-\ttext file\t'* ]]
}

@test "every long option in --help has an .It Fl entry in its man page's OPTIONS" {
	local bin page opt options missing=()
	for bin in $(built_bins); do
		page=$top_srcdir/man/$bin.1
		if [ ! -f "$page" ]; then
			missing+=("$bin.1")
			continue
		fi
		options=$(man_section "$page" OPTIONS)
		[ -n "$options" ] || fail "$bin.1 has no OPTIONS"
		for opt in $(help_longopts "$bin"); do
			# An entry in OPTIONS: ".It Fl d , Fl -db Ar dir".
			grep -qE -- "^\.It Fl (.*[[:space:]])?-${opt#--}([[:space:]]|\$)" \
			    <<<"$options" || missing+=("$bin.1:$opt")
		done
	done
	none_missing "${missing[@]}"
}

@test "bash offers every long option of --help where the binary takes it" {
	check_offered bash
}

@test "zsh offers every long option of --help where the binary takes it" {
	needs_zsh
	check_offered zsh
}

@test "fish offers every long option of --help where the binary takes it" {
	needs_fish
	check_offered fish
}

@test "every command in --help is in the man page and all three completions" {
	local cmd cmds commands missing=() bash zsh= fish=
	cmds=$(help_commands)
	[ -n "$cmds" ]
	commands=$(man_section "$top_srcdir/man/agentrt-session.1" COMMANDS)
	bash=$(bash_complete agentrt-session '')
	if command -v zsh >/dev/null && zsh -fc 'zmodload zsh/zpty' 2>/dev/null
	then
		zsh=$(zsh_complete 'agentrt-session ')
		[ -n "$zsh" ]
	fi
	if command -v fish >/dev/null; then
		fish=$(fish_complete 'agentrt-session ')
		[ -n "$fish" ]
	fi
	for cmd in $cmds; do
		grep -qE "^\.It Cm $cmd( |\$)" <<<"$commands" ||
		    missing+=("man:$cmd")
		grep -qxF -- "$cmd" <<<"$bash" || missing+=("bash:$cmd")
		[ -z "$zsh" ] || grep -qxF -- "$cmd" <<<"$zsh" ||
		    missing+=("zsh:$cmd")
		[ -z "$fish" ] || grep -qxF -- "$cmd" <<<"$fish" ||
		    missing+=("fish:$cmd")
	done
	none_missing "${missing[@]}"
}

@test "groff -mandoc -ww -z prints nothing for every man page" {
	command -v groff >/dev/null || skip "groff is not installed"
	local page n=0 bad=()
	for page in "$top_srcdir"/man/*.[1-9]; do
		[ -f "$page" ] || continue
		n=$((n + 1))
		run groff -mandoc -ww -z "$page"
		if [ "$status" -ne 0 ] || [ -n "$output" ]; then
			printf '%s: %s\n' "${page##*/}" "$output" >&2
			bad+=("${page##*/}")
		fi
	done
	[ "$n" -ge 5 ]
	[ "${#bad[@]}" -eq 0 ]
}

@test "the bash completion file parses" {
	run bash -n "$bashcomp"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "bash completes agentrt-session s to show and serve, and r to request, rm, restore, replay and run" {
	run bash_complete agentrt-session s
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "show serve" ]
	run bash_complete agentrt-session r
	[ "${lines[*]}" = "request rm restore replay run" ]
}

@test "bash completes agentrt-session log --a to --after" {
	run bash_complete agentrt-session log --a
	[ "$status" -eq 0 ]
	[ "$output" = --after ]
}

@test "bash completes -d with directories only" {
	mkdir "$BATS_TEST_TMPDIR/storedir"
	: >"$BATS_TEST_TMPDIR/storefile"
	cd "$BATS_TEST_TMPDIR"
	run bash_complete agentrt-session -d stor
	[ "$status" -eq 0 ]
	[ "$output" = storedir ]
	run bash_complete agentrt-session run --db stor
	[ "$output" = storedir ]
}

@test "bash completes files and directories where the options take them" {
	mkdir "$BATS_TEST_TMPDIR/somedir"
	: >"$BATS_TEST_TMPDIR/somefile"
	cd "$BATS_TEST_TMPDIR"
	run bash_complete agentrt-session run --events some
	[ "${lines[*]}" = "somedir somefile" ]
	run bash_complete agentrt-session run --agents some
	[ "$output" = somedir ]
	run bash_complete agentrt-session run --input @somef
	[ "$output" = @somefile ]
	run bash_complete agentrt-session run --input ''
	[[ " ${lines[*]} " == *" @somefile "* ]]
	run bash_complete agentrt-session run --input '{"type'
	[ -z "$output" ]
	run bash_complete agentrt-session run -m some
	[ -z "$output" ]
	run bash_complete agentrt-decide -f some
	[ "${lines[*]}" = "somedir somefile" ]
	run bash_complete agentrt-decide --from-file = somef
	[ "$output" = somefile ]
	run bash_complete agentrt-decide --rawfile name somef
	[ "$output" = somefile ]
	run bash_complete agentrt-decide --arg name somef
	[ -z "$output" ]
	run bash_complete agentrt-decide --arg name value somef
	[ "$output" = somefile ]
	run bash_complete agentrt-decide --jq . somef
	[ "$output" = somefile ]
	run bash_complete agentrt-llm --script somef
	[ "$output" = somefile ]
	run bash_complete agentrt-llm -m mock/
	[ "${lines[*]}" = "mock/echo mock/script" ]
	run bash_complete agentrt-llm -m open
	[ "$output" = openai/ ]
	run bash_complete agentrt-llm --replay somef
	[ "$output" = somefile ]
	run bash_complete agentrt-tool -t some
	[ "$output" = somedir ]
	run bash_complete agentrt-tool --cwd some
	[ "$output" = somedir ]
	run bash_complete agentrt-tool --timeout some
	[ -z "$output" ]
}

@test "the bash completion, sourced under any name, serves all six binaries" {
	local b
	ln -s "$bashcomp" "$BATS_TEST_TMPDIR/agentrt-tree"
	bashcomp=$BATS_TEST_TMPDIR/agentrt-tree
	for b in agentrt-session agentrt-decide agentrt-llm agentrt-tool \
	    agentrt-tree agentrt-shell agentrt-bus agentrt-serve; do
		run bash_complete "$b" --
		[ "$status" -eq 0 ]
		[[ " ${lines[*]} " == *" --help --version "* ]] ||
		    fail "$b: ${lines[*]}"
	done
	run bash_complete agentrt-tool --l
	[ "$output" = --list ]
	run bash_complete agentrt-shell --
	[ "${lines[*]}" = "--db --agent --session --continue --command --lines --system --agents --tools --mcp --tool-env --decide-jq --exec --url --model --record --replay --events --color --events-format --help --version" ]
}

@test "bash completes a SESSION from the store named by -d" {
	local db=$BATS_TEST_TMPDIR/db other=$BATS_TEST_TMPDIR/other
	run agentrt-session -d "$db" new --id demo1
	[ "$status" -eq 0 ]
	[ "$output" = demo1 ]
	run agentrt-session -d "$db" new --id demo2
	[ "$status" -eq 0 ]
	run agentrt-session -d "$other" new --id elsewhere
	[ "$status" -eq 0 ]
	export AGENTRT_DB=$other

	run bash_complete agentrt-session -d "$db" show ''
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "demo1 demo2" ]
	run bash_complete agentrt-session --db "$db" log -f demo1
	[ "$status" -eq 0 ]
	[ "$output" = demo1 ]
	run bash_complete agentrt-session "--db=$db" rm demo1 d
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "demo1 demo2" ]
	run bash_complete agentrt-session --db = "$db" run -s ''
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "demo1 demo2" ]
	run bash_complete agentrt-session run --session = ''
	[ "$output" = elsewhere ]
	# agentrt-session also takes -d after the command.
	run bash_complete agentrt-session show -d "$db" ''
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "demo1 demo2" ]
	run bash_complete agentrt-session run -d "$db" -s ''
	[ "${lines[*]}" = "demo1 demo2" ]
	# Without -d, the store is $AGENTRT_DB.
	run bash_complete agentrt-session show ''
	[ "$status" -eq 0 ]
	[ "$output" = elsewhere ]
	# run and ls take no SESSION argument.
	run bash_complete agentrt-session run ''
	[ -z "$output" ]
}

@test "bash completes run -a with the agents of the directories run searches" {
	make_agents
	run bash_complete agentrt-session run --agents ../given -a ''
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "alpha beta" ]
	run bash_complete agentrt-session run --agents = ../given --agent = b
	[ "$output" = beta ]
	run bash_complete agentrt-session run --agents=../given -a a
	[ "$output" = alpha ]
	run bash_complete agentrt-session run -a ''
	[ -z "$output" ]

	make_agents all
	export AGENTRT_AGENTS=../env1::../env2
	run bash_complete agentrt-session run -a ''
	[ "${lines[*]}" = "delta epsilon gamma zeta" ]
	run bash_complete agentrt-session -d db run --agents ../given -a ''
	[ "${lines[*]}" = "alpha beta delta epsilon gamma zeta" ]
	run bash_complete agentrt-session new -a e
	[ "${lines[*]}" = "epsilon" ]
	run bash_complete agentrt-decide --agent z
	[ "$output" = zeta ]
}

@test "zsh -n accepts the zsh completion" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	run zsh -n "$zshcomp"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run head -n 1 "$zshcomp"
	[ "$output" = "#compdef agentrt-session agentrt-decide agentrt-llm agentrt-tool agentrt-tree agentrt-shell agentrt-bus agentrt-serve" ]
}

@test "zsh completes commands, options and sessions" {
	needs_zsh
	local db=$BATS_TEST_TMPDIR/db
	run zsh_complete 'agentrt-session '
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "cancel checkpoint export import log ls new replay request restore rm run serve show" ]
	run zsh_complete 'agentrt-session log --a'
	[ "$status" -eq 0 ]
	[ "$output" = --after ]
	run agentrt-session -d "$db" new --id demo1
	[ "$status" -eq 0 ]
	export AGENTRT_DB=$BATS_TEST_TMPDIR/empty
	run zsh_complete "agentrt-session -d $db show "
	[ "$status" -eq 0 ]
	[ "$output" = demo1 ]
	run zsh_complete "agentrt-session run -d $db -s "
	[ "$output" = demo1 ]
	run zsh_complete 'agentrt-llm -m '
	[ "${lines[*]}" = "anthropic/ mock/echo mock/script openai/" ]
	run zsh_complete 'agentrt-llm --replay '
	[ "$status" -eq 0 ]
	run zsh_complete 'agentrt-shell --'
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "--agent --agents --color --command --continue --db --decide-jq --events --events-format --exec --help --lines --mcp --model --record --replay --session --system --tool-env --tools --url --version" ]
}

@test "zsh completes run -a with the agents of the directories run searches" {
	needs_zsh
	make_agents
	run zsh_complete 'agentrt-session run --agents ../given -a '
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "alpha beta" ]
	run zsh_complete 'agentrt-session run --agents=../given --agent='
	[ "${lines[*]}" = "alpha beta" ]
	make_agents all
	export AGENTRT_AGENTS=../env1:../env2
	run zsh_complete 'agentrt-session -d db run --agents ../given -a '
	[ "${lines[*]}" = "alpha beta delta epsilon gamma zeta" ]
	run zsh_complete 'agentrt-decide --agent '
	[ "${lines[*]}" = "delta epsilon gamma zeta" ]
}

@test "zsh completes files and directories where the options take them" {
	needs_zsh
	mkdir "$BATS_TEST_TMPDIR/somedir"
	: >"$BATS_TEST_TMPDIR/somefile"
	cd "$BATS_TEST_TMPDIR"
	run zsh_complete 'agentrt-session run --agents some'
	[ "$output" = somedir ]
	run zsh_complete 'agentrt-session run --events some'
	[ "${lines[*]}" = "somedir somefile" ]
	run zsh_complete 'agentrt-session run --input @somef'
	[ "$output" = somefile ]
	run zsh_complete 'agentrt-decide --slurpfile name somef'
	[ "$output" = somefile ]
	run zsh_complete 'agentrt-tool -t some'
	[ "$output" = somedir ]
}

@test "fish completes commands, options and sessions" {
	needs_fish
	local db=$BATS_TEST_TMPDIR/db
	run fish --no-config --no-execute "$fishcomp"
	[ "$status" -eq 0 ]
	run fish_complete 'agentrt-session s'
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "serve show" ]
	run fish_complete 'agentrt-session log --a'
	[ "$output" = --after ]
	run agentrt-session -d "$db" new --id demo1
	[ "$status" -eq 0 ]
	export AGENTRT_DB=$BATS_TEST_TMPDIR/empty
	run fish_complete "agentrt-session -d $db show "
	[ "$output" = demo1 ]
	run fish_complete "agentrt-session run -d $db -s "
	[ "$output" = demo1 ]
	run fish_complete 'agentrt-llm -m '
	[ "${lines[*]}" = "anthropic/ mock/echo mock/script openai/" ]
	run fish_complete 'agentrt-shell --'
	[ "${lines[*]}" = "--agent --agents --color --command --continue --db --decide-jq --events --events-format --exec --help --lines --mcp --model --record --replay --session --system --tools --tool-env --url --version" ]
}

@test "fish completes run -a with the agents of the directories run searches" {
	needs_fish
	make_agents
	run fish_complete 'agentrt-session run --agents ../given -a '
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "alpha beta" ]
	make_agents all
	export AGENTRT_AGENTS=../env1:../env2
	run fish_complete 'agentrt-session -d db run --agents ../given -a '
	[ "${lines[*]}" = "alpha beta delta epsilon gamma zeta" ]
	run fish_complete 'agentrt-decide --agent '
	[ "${lines[*]}" = "delta epsilon gamma zeta" ]
}

@test "fish completes files and directories where the options take them" {
	needs_fish
	mkdir "$BATS_TEST_TMPDIR/somedir"
	: >"$BATS_TEST_TMPDIR/somefile"
	cd "$BATS_TEST_TMPDIR"
	run fish_complete 'agentrt-session run --agents some'
	[ "$output" = somedir/ ]
	run fish_complete 'agentrt-session run --events some'
	[ "${lines[*]}" = "somedir/ somefile" ]
	run fish_complete 'agentrt-session run --input @somef'
	[ "$output" = @somefile ]
	run fish_complete 'agentrt-session run -m some'
	[ -z "$output" ]
	run fish_complete 'agentrt-decide --arg name some'
	[ -z "$output" ]
	run fish_complete 'agentrt-decide --rawfile name somef'
	[ "$output" = somefile ]
	run fish_complete 'agentrt-tool -t some'
	[ "$output" = somedir/ ]
}

# Prints the EXAMPLES of man page PAGE as a bash script: the literal
# displays and .Dl lines, with the roff escapes they use undone.  A line
# that runs log -f is left out: it never ends.
examples_script() {
	echo 'set -euo pipefail'
	awk '/^\.Sh EXAMPLES/ { on = 1; next } /^\.Sh / { on = 0 }
	    on && /^\.Bd -literal/ { lit = 1; next }
	    on && /^\.Ed/ { lit = 0; next }
	    on && lit { print; next }
	    on && /^\.Dl / { sub(/^\.Dl /, ""); print }' "$1" |
		grep -vE ' log( [^|;&]*)? (-f|--follow)( |$)' |
		sed -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g" -e 's/\\&//g' \
		    -e 's/\\-/-/g' -e 's/\\e/\\/g'
}

# The EXAMPLES of every page run as written, each page's in a directory of
# its own where examples/ is the source's, so the manual cannot drift from
# the programs.
# A local server the manual's examples talk to stands in for the one at
# 127.0.0.1:8080 they name, which the machine running the tests may not
# have, or may have as something else entirely.
teardown() {
	stop_server
	[ -z "${nats_pid:-}" ] || kill -9 "$nats_pid" 2>/dev/null
	return 0
}

# nats_start DIR: a JetStream nats-server on a free loopback port, its
# files in DIR; exports NATS_URL, sets nats_pid.
nats_start() {
	local port i
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	nats-server -js -a 127.0.0.1 -p "$port" -sd "$1" >"$1.log" 2>&1 &
	nats_pid=$!
	export NATS_URL=nats://127.0.0.1:$port
	for i in $(seq 1 100); do
		agentrt-bus init >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "nats-server did not start: $(cat "$1.log")"
}

@test "the EXAMPLES of every man page run and succeed" {
	local page name dir script bad=() n=0
	start_server
	for page in "$top_srcdir"/man/agentrt-*.1 "$top_srcdir"/man/agentrt.7
	do
		[ -f "$page" ] || continue
		name=${page##*/}
		dir=$BATS_TEST_TMPDIR/run-$name
		script=$BATS_TEST_TMPDIR/$name.sh
		mkdir -p "$dir" "$BATS_TEST_TMPDIR/tmp"
		ln -s "$top_srcdir/examples" "$dir/examples"
		examples_script "$page" |
		    sed "s|http://127\.0\.0\.1:8080/v1|$srv/loop/0/v1|g" \
		    >"$script"
		if [[ $name == *.1 ]] &&
		    [ "$(grep -c -- "${name%.1}" "$script")" -lt 2 ]; then
			bad+=("$name: no EXAMPLES of ${name%.1}")
			continue
		fi
		# agentrt-bus's examples talk to a NATS server: one of the
		# test's own, on a free port, when the machine has nats-server.
		if [ "$name" = agentrt-bus.1 ]; then
			command -v nats-server >/dev/null || continue
			nats_start "$BATS_TEST_TMPDIR/nats"
		fi
		n=$((n + 1))
		run env AGENTRT_DB="$BATS_TEST_TMPDIR/$name.db" \
		    TMPDIR="$BATS_TEST_TMPDIR/tmp" \
		    sh -c 'cd "$1" && exec timeout 120 bash "$2"' sh \
		    "$dir" "$script"
		if [ "$status" -ne 0 ] || [ -z "$output" ]; then
			bad+=("$name: status $status: $output")
			continue
		fi
		case $name in
		agentrt-session.1)
			[[ $output == *'"idle"'* &&
			    $output == *'"session.created"'* ]] ||
			    bad+=("$name: $output")
			;;
		agentrt-llm.1)
			[[ $output == *'done after 0 steps'* ]] ||
			    bad+=("$name: no answer from the local server: $output")
			;;
		agentrt-bus.1 | agentrt-serve.1)
			[[ $output == '17*23 = 391' ]] || bad+=("$name: $output")
			;;
		agentrt.7)
			[[ $output == *'17*23 = 391'* &&
			    $output == *'parked: status 3'* &&
			    $output == *'the user said yes'* ]] ||
			    bad+=("$name: $output")
			;;
		esac
	done
	[ "${#bad[@]}" -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
	[ "$n" -ge 5 ]
}
