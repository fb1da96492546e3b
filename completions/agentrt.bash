# agentrt.bash - bash completion for the agentrt binaries
#
# One file for all six binaries.  make install links it under each binary's
# name in bash-completion's directory, so whichever name it is loaded under it
# registers the same function for every binary.  It needs nothing from the
# bash-completion package.
#
# The options, what their arguments are, and the commands come from the
# binary itself: `BIN --completions` prints them, one line each, from the
# table its --help is made from (the format is in agentrt(7), OPTIONS).
# What is known only here is how to complete each kind of argument.

# Sets words and cword from COMP_WORDS and COMP_CWORD, without the = that
# bash splits --opt=ARG around: --opt and ARG are then two words, as
# getopt_long sees them.
_agentrt_words()
{
	local i w
	words=()
	cword=0
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == = ]] && ((i > 0)) && [[ ${COMP_WORDS[i-1]} == --?* ]]
		then
			if ((i == COMP_CWORD)); then
				words+=('')
				cword=$((${#words[@]} - 1))
			fi
			continue
		fi
		words+=("$w")
		((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
	done
	cur=${words[cword]}
}

# _agentrt_scan SPEC: reads words 1..cword-1 as getopt_long does.  SPEC
# lists the options that take arguments, as OPT:N for N arguments.  Sets
# opt to the option whose argument the current word is, and argn to which
# of its arguments (from 1), or opt to nothing; and args to the words
# before the current one that are neither options nor their arguments.
_agentrt_scan()
{
	local spec=" $1 " i w o n inline ddash=0

	opt= argn=0 args=()
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if ((ddash)) || [[ $w != -?* ]]; then
			args+=("$w")
			continue
		fi
		if [[ $w == -- ]]; then
			ddash=1
			continue
		fi
		inline=0
		o=$w
		if [[ $w == --*=* ]]; then
			o=${w%%=*} inline=1
		elif [[ $w == -[!-]?* ]]; then
			o=${w:0:2} inline=1
		fi
		[[ $spec == *" $o:"* ]] || continue
		n=${spec#*" $o:"}
		n=$((${n%% *} - inline))
		if ((i + n >= cword)); then
			opt=$o argn=$((cword - i + inline))
			return 0
		fi
		((i += n))
	done
}

# Prints the arguments of every OPT (long, or short with its argument
# attached) among words 1..cword-1, with quotes removed and ~ expanded:
# _agentrt_optargs -d --db prints the store directories named.
_agentrt_optargs()
{
	local i w o v
	for ((i = 1; i < cword; i++)); do
		w=${words[i]} v=
		for o; do
			if [[ $w == "$o" ]] && ((i + 1 < cword)); then
				v=${words[i+1]}
			elif [[ $o == --* && $w == "$o="?* ]]; then
				v=${w#"$o="}
			elif [[ $o == -[!-] && $w == "$o"?* ]]; then
				v=${w#"$o"}
			else
				continue
			fi
			v=${v#[\"\']}
			v=${v%[\"\']}
			[[ $v == \~* ]] && v=$HOME${v#\~}
			printf '%s\n' "$v"
		done
	done
}

_agentrt_reply()
{
	mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

_agentrt_files()
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

# jq programs: files whose names end in .jq, and directories to look in.
_agentrt_jq_files()
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -X '!*.jq' -- "$cur"
	    compgen -d -- "$cur")
}

_agentrt_dirs()
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -d -- "$cur")
}

# A command for --exec: a command name, or a path when the word has a /.
_agentrt_command()
{
	if [[ $cur == */* ]]; then
		_agentrt_files
	else
		mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
	fi
}

# Files named as @FILE, the form --input and --payload take them in.
_agentrt_at_files()
{
	local f
	[[ -z $cur || $cur == @* ]] || return 0
	COMPREPLY=()
	while IFS= read -r f; do
		if [[ -d $f ]]; then
			COMPREPLY+=("@$f/")
			compopt -o nospace 2>/dev/null
		else
			COMPREPLY+=("@$f")
		fi
	done < <(compgen -f -- "${cur#@}")
}

# The agents agentrt-session run can find: NAME for each NAME.json in each
# --agents DIR on the line, then in $AGENTRT_AGENTS (colon-separated), then
# in $XDG_CONFIG_HOME/agentrt/agents (else ~/.config/agentrt/agents), then
# in ./agents.
_agentrt_agent_names()
{
	local d f dirs=() env=()

	mapfile -t dirs < <(_agentrt_optargs --agents)
	[[ -n ${AGENTRT_AGENTS-} ]] && IFS=: read -ra env <<<"$AGENTRT_AGENTS"
	dirs+=("${env[@]}")
	if [[ ${XDG_CONFIG_HOME-} == /* ]]; then
		dirs+=("$XDG_CONFIG_HOME/agentrt/agents")
	elif [[ -n ${HOME-} ]]; then
		dirs+=("$HOME/.config/agentrt/agents")
	fi
	dirs+=(agents)
	for d in "${dirs[@]}"; do
		[[ -n $d ]] || continue
		for f in "$d"/*.json; do
			[[ -f $f ]] || continue
			f=${f##*/}
			f=${f%.json}
			[[ $f =~ ^[A-Za-z0-9._:-]+$ ]] && printf '%s\n' "$f"
		done
	done | sort -u
}

# The ids of the sessions in the store named by the last -d or --db on the
# line (agentrt-session takes it before or after its command), else in the
# default store.
_agentrt_session_ids()
{
	local db
	db=$(_agentrt_optargs -d --db | tail -n 1)
	if [[ -n $db ]]; then
		agentrt-session -d "$db" ls -q 2>/dev/null
	else
		agentrt-session ls -q 2>/dev/null
	fi
}

# The abbreviated node ids of session $1, as agentrt-tree show prints them,
# from the store named by the last -d or --db on the line.
_agentrt_tree_nodes()
{
	local db
	db=$(_agentrt_optargs -d --db | tail -n 1)
	agentrt-tree ${db:+-d "$db"} show "$1" 2>/dev/null |
	    sed -n 's/^[^*]*\* [^ ]*  *\([^ ]*\).*/\1/p'
}

# _agentrt_load BIN: reads BIN --completions into the caller's arrays:
# longs (the long options in order), short, kinds, owords, where, flags
# (by long option), spec (for _agentrt_scan), cmds (the commands in
# order) and operands (by command).
_agentrt_load()
{
	local long sh k w c f rest
	local -a n
	while IFS=$'\t' read -r long sh k w c f rest; do
		if [[ $long != -* ]]; then
			cmds+=("$long")
			operands[$long]=$sh
			continue
		fi
		longs+=("$long")
		short[$long]=$sh kinds[$long]=$k owords[$long]=$w
		where[$long]=$c flags[$long]=$f
		[[ $k == - ]] && continue
		read -ra n <<<"$k"
		spec+=" $long:${#n[@]}"
		[[ $sh == - ]] || spec+=" $sh:${#n[@]}" long_of[$sh]=$long
	done < <("$1" --completions 2>/dev/null)
	((${#longs[@]} > 0))
}

# Completes an argument of kind $1; $2 is the option's words.
_agentrt_arg()
{
	case $1 in
	file) _agentrt_files ;;
	dir) _agentrt_dirs ;;
	jq-file) _agentrt_jq_files ;;
	at-file) _agentrt_at_files ;;
	agent) _agentrt_reply "$(_agentrt_agent_names)" ;;
	session) _agentrt_reply "$(_agentrt_session_ids)" ;;
	model|words) _agentrt_reply "$2" ;;
	command) _agentrt_command ;;
	url)
		_agentrt_reply 'http:// https://'
		compopt -o nospace 2>/dev/null
		;;
	env) _agentrt_reply "$(compgen -e)" ;;
	esac
}

# _agentrt_optlist CMD: the options, short and long, taken after command
# CMD, its own first; with CMD "", those taken before any command, and
# with CMD "*", all.
_agentrt_optlist()
{
	local o pass list=
	for pass in own any; do
		for o in "${longs[@]}"; do
			case $1:$pass in
			'*:own') ;;
			:own) [[ ${where[$o]} == - ]] || continue ;;
			*:any)
				[[ $1 != '*' && -n $1 && ${where[$o]} == - &&
				    ${flags[$o]} != *exits* ]] || continue
				;;
			*) [[ " ${where[$o]} " == *" $1 "* ]] || continue ;;
			esac
			[[ ${short[$o]} == - ]] || list+=" ${short[$o]}"
			list+=" $o"
		done
	done
	printf '%s\n' "$list"
}

# Completes operand number $1 (from 0) of command $2, by its kinds.
_agentrt_operand()
{
	local -a ks
	read -ra ks <<<"${operands[$2]}"
	[[ ${ks[0]} == - ]] && return 0
	if (($1 >= ${#ks[@]})); then
		[[ ${ks[-1]} == *... ]] || return 0
		set -- $((${#ks[@]} - 1)) "$2"
	fi
	case ${ks[$1]%...} in
	session) _agentrt_reply "$(_agentrt_session_ids)" ;;
	node) _agentrt_reply "$(_agentrt_tree_nodes "${args[1]}")" ;;
	file) _agentrt_files ;;
	esac
}

_agentrt()
{
	local prog=${1:-${COMP_WORDS[0]}} cur cword words=() opt argn args=()
	local spec= cmd k w
	local -a longs=() cmds=() ks=()
	local -A short=() kinds=() owords=() where=() flags=() operands=()
	local -A long_of=()

	COMPREPLY=()
	_agentrt_words
	_agentrt_load "${prog/#\~/$HOME}" || return 0
	_agentrt_scan "$spec"

	if [[ -n $opt ]]; then
		[[ $opt == --* ]] || opt=${long_of[$opt]}
		read -ra ks <<<"${kinds[$opt]}"
		k=${ks[argn - 1]-} w=${owords[$opt]}
		[[ $w == - ]] && w=
		[[ -n $k ]] && _agentrt_arg "$k" "$w"
		return 0
	fi

	# A binary without commands: its operands are files, but for
	# agentrt-shell, which takes options only.
	if ((${#cmds[@]} == 0)); then
		if [[ $cur == -* || ${prog##*/} == agentrt-shell ]]; then
			_agentrt_reply "$(_agentrt_optlist '*')"
		else
			_agentrt_files
		fi
		return 0
	fi

	cmd=${args[0]-}
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			_agentrt_reply "$(_agentrt_optlist '')"
		else
			_agentrt_reply "${cmds[*]}"
		fi
		return 0
	fi
	[[ -n ${operands[$cmd]+set} ]] || return 0
	if [[ $cur == -* ]]; then
		_agentrt_reply "$(_agentrt_optlist "$cmd")"
		return 0
	fi
	_agentrt_operand $((${#args[@]} - 1)) "$cmd"
}

complete -F _agentrt agentrt-session agentrt-decide agentrt-llm \
    agentrt-tool agentrt-tree agentrt-shell agentrt-bus agentrt-serve
