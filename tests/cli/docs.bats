#!/usr/bin/env bats
# docs.bats - the manual pages and completions agree with --help

load lib

man1=$top_srcdir/man/agentrt-session.1
bashcomp=$top_srcdir/completions/agentrt.bash
zshcomp=$top_srcdir/completions/_agentrt
fishcomp=$top_srcdir/completions/agentrt.fish

# Prints the long options of agentrt-session --help, one per line.
help_longopts() {
	local text
	text=$(agentrt-session --help) || return 1
	grep -oE -- '--[a-z][a-z0-9-]*' <<<"$text" | sort -u
}

# Prints the commands listed under "Commands:" in agentrt-session --help.
help_commands() {
	local text
	text=$(agentrt-session --help) || return 1
	sed -n '/^Commands:/,/^$/p' <<<"$text" | awk '/^  [a-z]/ { print $1 }'
}

# The part of each completion file that completes agentrt-session.
zsh_session_part() {
	sed -n '/^_agentrt_session() {/,/^}/p' "$zshcomp"
}
fish_session_part() {
	grep -E '^complete -c agentrt-session ' "$fishcomp"
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

# Fails, naming them, if any arguments were given: the things found missing.
none_missing() {
	if [ "$#" -gt 0 ]; then
		printf 'missing: %s\n' "$*" >&2
		return 1
	fi
}

@test "--help lists the options and commands the other checks rely on" {
	run help_longopts
	[ "$status" -eq 0 ]
	[[ " ${lines[*]} " == *" --db "* ]]
	[ "${#lines[@]}" -ge 9 ]
	run help_commands
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "new ls show log rm" ]
}

@test "every long option in --help is in the man page and all three completions" {
	local opt opts name cmd missing=() offered zshpart fishpart
	opts=$(help_longopts)
	[ -n "$opts" ]
	# What bash offers for "-" before the command and after each command.
	offered=$(bash_complete agentrt-session - &&
	    for cmd in $(help_commands); do
		bash_complete agentrt-session "$cmd" - || exit
	    done)
	zshpart=$(zsh_session_part)
	[ -n "$zshpart" ]
	fishpart=$(fish_session_part)
	[ -n "$fishpart" ]
	for opt in $opts; do
		name=${opt#--}
		# An entry in OPTIONS: ".It Fl d , Fl -db Ar dir".
		grep -qE "^\.It Fl (.*[[:space:]])?-$name([[:space:]]|\$)" \
		    "$man1" || missing+=("man:$opt")
		grep -qxF -- "$opt" <<<"$offered" || missing+=("bash:$opt")
		grep -qwF -- "$opt" <<<"$zshpart" || missing+=("zsh:$opt")
		grep -qE -- "[[:space:]](-l|--long|--long-option)[[:space:]=]+['\"]?$name['\"]?([[:space:]]|\$)" \
		    <<<"$fishpart" || missing+=("fish:$opt")
	done
	none_missing "${missing[@]}"
}

@test "every command in --help is in the man page and all three completions" {
	local cmd cmds missing=() offered zshpart fishpart
	cmds=$(help_commands)
	[ -n "$cmds" ]
	offered=$(bash_complete agentrt-session '')
	zshpart=$(zsh_session_part)
	fishpart=$(fish_session_part)
	for cmd in $cmds; do
		grep -qE "^\.It Cm $cmd( |\$)" "$man1" || missing+=("man:$cmd")
		grep -qxF -- "$cmd" <<<"$offered" || missing+=("bash:$cmd")
		grep -qE "['\"]$cmd:" <<<"$zshpart" || missing+=("zsh:$cmd")
		grep -qE -- "[[:space:]]-a ['\"]?$cmd['\"]?([[:space:]]|\$)" \
		    <<<"$fishpart" || missing+=("fish:$cmd")
	done
	none_missing "${missing[@]}"
}

@test "groff -mandoc -ww -z prints nothing for every man page" {
	command -v groff >/dev/null || skip "groff is not installed"
	local page n=0
	for page in "$top_srcdir"/man/*.[1-9]; do
		[ -f "$page" ] || continue
		n=$((n + 1))
		run groff -mandoc -ww -z "$page"
		[ "$status" -eq 0 ]
		if [ -n "$output" ]; then
			printf '%s: %s\n' "$page" "$output" >&2
			false
		fi
	done
	[ "$n" -ge 2 ]
}

@test "the bash completion file parses" {
	run bash -n "$bashcomp"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "bash completes agentrt-session s to show" {
	run bash_complete agentrt-session s
	[ "$status" -eq 0 ]
	[ "$output" = show ]
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
}

@test "the bash completion, sourced under any name, serves all six binaries" {
	local b
	ln -s "$bashcomp" "$BATS_TEST_TMPDIR/agentrt-tree"
	bashcomp=$BATS_TEST_TMPDIR/agentrt-tree
	for b in agentrt-session agentrt-decide agentrt-llm agentrt-tool \
	    agentrt-tree agentrt-shell; do
		run bash_complete "$b" --
		[ "$status" -eq 0 ]
	done
	for b in agentrt-decide agentrt-llm agentrt-tool agentrt-tree \
	    agentrt-shell; do
		run bash_complete "$b" --
		[ "${lines[*]}" = "--help --version" ]
	done
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
	# agentrt-session also takes -d after the command.
	run bash_complete agentrt-session show -d "$db" ''
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "demo1 demo2" ]
	# Without -d, the store is $AGENTRT_DB.
	run bash_complete agentrt-session show ''
	[ "$status" -eq 0 ]
	[ "$output" = elsewhere ]
}

@test "zsh -n accepts the zsh completion" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	run zsh -n "$zshcomp"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run head -n 1 "$zshcomp"
	[ "$output" = "#compdef agentrt-session agentrt-decide agentrt-llm agentrt-tool agentrt-tree agentrt-shell" ]
}

@test "zsh completes commands, options and sessions" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	zsh -fc 'zmodload zsh/zpty' 2>/dev/null || skip "zsh has no zpty"
	local db=$BATS_TEST_TMPDIR/db
	run zsh_complete 'agentrt-session '
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "log ls new rm show" ]
	run zsh_complete 'agentrt-session log --a'
	[ "$status" -eq 0 ]
	[ "$output" = --after ]
	run agentrt-session -d "$db" new --id demo1
	[ "$status" -eq 0 ]
	export AGENTRT_DB=$BATS_TEST_TMPDIR/empty
	run zsh_complete "agentrt-session -d $db show "
	[ "$status" -eq 0 ]
	[ "$output" = demo1 ]
	run zsh_complete 'agentrt-llm --'
	[ "$status" -eq 0 ]
	[ "${lines[*]}" = "--help --version" ]
}

@test "fish completes commands, options and sessions" {
	command -v fish >/dev/null || skip "fish is not installed"
	local db=$BATS_TEST_TMPDIR/db
	run fish --no-config --no-execute "$fishcomp"
	[ "$status" -eq 0 ]
	run fish_complete 'agentrt-session s'
	[ "$status" -eq 0 ]
	[ "$output" = show ]
	run fish_complete 'agentrt-session log --a'
	[ "$output" = --after ]
	run agentrt-session -d "$db" new --id demo1
	[ "$status" -eq 0 ]
	export AGENTRT_DB=$BATS_TEST_TMPDIR/empty
	run fish_complete "agentrt-session -d $db show "
	[ "$output" = demo1 ]
	run fish_complete 'agentrt-llm --'
	[ "${lines[*]}" = "--help --version" ]
}

# The EXAMPLES section runs as written (but for log -f, which never ends),
# so the manual cannot drift from the program.
@test "the man page's EXAMPLES run and succeed" {
	script=$BATS_TEST_TMPDIR/examples.sh
	{
		echo 'set -euo pipefail'
		awk '/^\.Sh EXAMPLES/ { on = 1; next } /^\.Sh / { on = 0 }
		    on && /^\.Bd -literal/ { lit = 1; next }
		    on && /^\.Ed/ { lit = 0; next }
		    on && lit { print; next }
		    on && /^\.Dl / && !/ -f / { sub(/^\.Dl /, ""); print }' \
		    "$top_srcdir/man/agentrt-session.1" |
			sed -e 's/\\e/\\/g' -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g"
	} >"$script"
	[ "$(grep -c agentrt-session "$script")" -ge 8 ]
	run bash "$script"
	[ "$status" -eq 0 ] || fail "examples failed: $output"
	[[ "$output" == *'"idle"'* ]]
	[[ "$output" == *'"session.created"'* ]]
}
