# agentrt.bash - bash completion for the agentrt binaries
#
# One file for all six binaries.  make install links it under each binary's
# name in bash-completion's directory, so whichever name it is loaded under it
# registers the same function for every binary.  It needs nothing from the
# bash-completion package.

# Prints the store directory named by the last -d DIR, -dDIR, --db DIR or
# --db=DIR among words 1..cword-1 (bash splits --db=DIR into --db, =, DIR),
# with surrounding quotes removed and a leading ~ expanded.  agentrt-session
# takes -d before or after its command.
_agentrt_session_db()
{
	local i w db=
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-d|--db)
			if [[ ${COMP_WORDS[i+1]} == = ]]; then
				((i++))
			fi
			if ((i + 1 < COMP_CWORD)); then
				db=${COMP_WORDS[i+1]}
				((i++))
			fi
			;;
		--db=?*) db=${w#--db=} ;;
		-d?*) db=${w#-d} ;;
		esac
	done
	[[ -n $db ]] || return 0
	db=${db#[\"\']}
	db=${db%[\"\']}
	[[ $db == \~* ]] && db=$HOME${db#\~}
	printf '%s\n' "$db"
}

# The ids of the sessions in the store the command line names.
_agentrt_session_ids()
{
	local db
	db=$(_agentrt_session_db)
	if [[ -n $db ]]; then
		agentrt-session -d "$db" ls -q 2>/dev/null
	else
		agentrt-session ls -q 2>/dev/null
	fi
}

_agentrt_session()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmds='new ls show log rm'
	local gopts='-d --db -h --help -V --version'
	local cmd= i w nargs=0 opts= ids

	# bash splits --opt=ARG into --opt, =, ARG: see through the =.
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]]; then
		prev=${COMP_WORDS[COMP_CWORD-2]}
	fi
	if [[ $prev == -d || $prev == --db ]]; then
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0
	fi

	# Find the command and count the arguments already given to it.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ -z $cmd ]]; then
			case $w in
			-d|--db) ((i++)); [[ ${COMP_WORDS[i]} == = ]] && ((i++)) ;;
			-*) ;;
			*) cmd=$w ;;
			esac
			continue
		fi
		case $w in
		-d|--db|-a|--agent|--id|--identity|--after)
			((i++))
			[[ ${COMP_WORDS[i]} == = ]] && ((i++))
			;;
		-*) ;;
		*) nargs=$((nargs + 1)) ;;
		esac
	done

	case $cmd in
	'')
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$gopts" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur")
		fi
		return 0
		;;
	new)
		case $prev in
		-a|--agent|--id|--identity) return 0 ;;
		esac
		opts='-a --agent --id --identity -d --db'
		;;
	ls) opts='-q --quiet -d --db' ;;
	show) opts='-d --db' ;;
	log)
		[[ $prev == --after ]] && return 0
		opts='--after -f --follow -d --db'
		;;
	rm) opts='-d --db' ;;
	*) return 0 ;;
	esac

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return 0
	fi
	case $cmd in
	show|log) ((nargs == 0)) || return 0 ;;
	rm) ;;
	*) return 0 ;;
	esac
	ids=$(_agentrt_session_ids)
	mapfile -t COMPREPLY < <(compgen -W "$ids" -- "$cur")
}

# The binaries still to come answer only --help and --version.
_agentrt()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prog=${1:-${COMP_WORDS[0]}}

	COMPREPLY=()
	case ${prog##*/} in
	agentrt-session) _agentrt_session ;;
	*) mapfile -t COMPREPLY < <(compgen -W '--help --version' -- "$cur") ;;
	esac
}

complete -F _agentrt agentrt-session agentrt-decide agentrt-llm \
    agentrt-tool agentrt-tree agentrt-shell
