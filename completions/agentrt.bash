# agentrt.bash - bash completion for the agentrt binaries
#
# One file for all six binaries.  make install links it under each binary's
# name in bash-completion's directory, so whichever name it is loaded under it
# registers the same function for every binary.  It needs nothing from the
# bash-completion package.

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

_agentrt_session()
{
	local cmds='new ls show request log rm cancel export import checkpoint
	    restore replay run'
	local gopts='-d --db -h --help -V --version'
	local spec='-d:1 --db:1 -a:1 --agent:1 --id:1 --identity:1 --after:1
	    -s:1 --session:1 -m:1 --message:1 --turn-id:1 --input:1 --resume:1
	    --payload:1 --events:1 --agents:1 --tools:1 --max-line:1 --as:1
	    -o:1 --output:1 --policy:1'
	local cmd nargs opts

	_agentrt_scan "$spec"
	cmd=${args[0]-}
	nargs=$((${#args[@]} > 0 ? ${#args[@]} - 1 : 0))

	case $opt in
	'') ;;
	-d|--db|--agents|--tools) _agentrt_dirs; return 0 ;;
	-a|--agent) _agentrt_reply "$(_agentrt_agent_names)"; return 0 ;;
	-s|--session) _agentrt_reply "$(_agentrt_session_ids)"; return 0 ;;
	--events|-o|--output) _agentrt_files; return 0 ;;
	--policy) _agentrt_jq_files; return 0 ;;
	--input|--payload) _agentrt_at_files; return 0 ;;
	*) return 0 ;;
	esac

	case $cmd in
	'')
		if [[ $cur == -* ]]; then
			_agentrt_reply "$gopts"
		else
			_agentrt_reply "$cmds"
		fi
		return 0
		;;
	new) opts='-a --agent --id --identity' ;;
	ls) opts='-q --quiet' ;;
	show|request|rm|cancel) opts= ;;
	log) opts='--after -f --follow' ;;
	export) opts='--children' ;;
	import|restore) opts='--as' ;;
	checkpoint) opts='-o --output --hash' ;;
	replay) opts='--policy --agents' ;;
	run)
		opts='-a --agent -s --session -m --message --turn-id --input
		    --resume --payload --events --agents --tools --max-line'
		;;
	*) return 0 ;;
	esac

	if [[ $cur == -* ]]; then
		_agentrt_reply "$opts -d --db"
		return 0
	fi
	case $cmd in
	show|request|log|export|checkpoint) ((nargs == 0)) || return 0 ;;
	rm|cancel) ;;
	import|restore|replay)
		((nargs == 0)) && _agentrt_files
		return 0
		;;
	*) return 0 ;;
	esac
	_agentrt_reply "$(_agentrt_session_ids)"
}

_agentrt_decide()
{
	_agentrt_scan '--jq:1 -f:1 --from-file:1 --exec:1 --url:1
	    --signing-secret-env:1 --arg:2 --argjson:2 --slurpfile:2 --rawfile:2
	    --agent:1 --max-line:1'
	case $opt:$argn in
	:0) ;;
	-f:1|--from-file:1|--slurpfile:2|--rawfile:2) _agentrt_files; return ;;
	--exec:1) _agentrt_command; return ;;
	--url:1)
		_agentrt_reply 'http:// https://'
		compopt -o nospace 2>/dev/null
		return
		;;
	--signing-secret-env:1) _agentrt_reply "$(compgen -e)"; return ;;
	--agent:1) _agentrt_reply "$(_agentrt_agent_names)"; return ;;
	*) return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		_agentrt_reply '--jq -f --from-file --exec --url --signing-secret-env
		    --arg --argjson --slurpfile --rawfile --agent --max-line
		    -h --help -V --version'
	else
		_agentrt_files
	fi
}

_agentrt_llm()
{
	_agentrt_scan '-m:1 --model:1 --script:1 --record:1 --replay:1
	    --prices:1 --max-line:1'
	case $opt in
	'') ;;
	-m|--model) _agentrt_reply 'mock/echo mock/script openai/ anthropic/'
		return ;;
	--script|--record|--replay|--prices) _agentrt_files; return ;;
	*) return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		_agentrt_reply '-m --model --script --record --replay --prices
		    --max-line -h --help -V --version'
	else
		_agentrt_files
	fi
}

_agentrt_tool()
{
	_agentrt_scan '-t:1 --tools:1 --mcp:1 --record:1 --replay:1 --cwd:1
	    -j:1 --jobs:1 --timeout:1 --kill-grace:1 --cpu:1 --memory:1
	    --files:1 --max-output:1 --max-line:1'
	case $opt in
	'') ;;
	-t|--tools|--cwd) _agentrt_dirs; return ;;
	--record|--replay) _agentrt_files; return ;;
	*) return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		_agentrt_reply '-t --tools --mcp --record --replay --cwd -j --jobs
		    --timeout --kill-grace --cpu --memory --files --max-output
		    --max-line -l --list
		    -h --help -V --version'
	else
		_agentrt_files
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

_agentrt_tree()
{
	local cmds='show path branches diff checkout export'
	local cmd nargs opts

	_agentrt_scan '-d:1 --db:1 --format:1'
	cmd=${args[0]-}
	nargs=$((${#args[@]} > 0 ? ${#args[@]} - 1 : 0))

	case $opt in
	'') ;;
	-d|--db) _agentrt_dirs; return 0 ;;
	--format) _agentrt_reply 'ndjson openai anthropic markdown'; return 0 ;;
	*) return 0 ;;
	esac

	case $cmd in
	'')
		if [[ $cur == -* ]]; then
			_agentrt_reply '-d --db -h --help -V --version'
		else
			_agentrt_reply "$cmds"
		fi
		return 0
		;;
	show) opts='--dot' ;;
	export) opts='--format' ;;
	path|branches|diff|checkout) opts= ;;
	*) return 0 ;;
	esac

	if [[ $cur == -* ]]; then
		_agentrt_reply "$opts -d --db"
		return 0
	fi
	case $cmd:$nargs in
	*:0) _agentrt_reply "$(_agentrt_session_ids)" ;;
	path:1|checkout:1|diff:1|diff:2)
		_agentrt_reply "$(_agentrt_tree_nodes "${args[1]}")"
		;;
	esac
}

# agentrt-shell takes options only: -a as agentrt-session run's, -s and
# -d as agentrt-session's, -m as agentrt-llm's, the decide options as
# agentrt-decide's.
_agentrt_shell()
{
	_agentrt_scan '-d:1 --db:1 -a:1 --agent:1 -s:1 --session:1 -c:1
	    --command:1 --agents:1 --tools:1 --mcp:1 --decide-jq:1 --exec:1
	    --url:1 -m:1 --model:1 --record:1 --replay:1'
	case $opt in
	'') ;;
	-d|--db|--agents|--tools) _agentrt_dirs; return ;;
	-a|--agent) _agentrt_reply "$(_agentrt_agent_names)"; return ;;
	-s|--session) _agentrt_reply "$(_agentrt_session_ids)"; return ;;
	-m|--model) _agentrt_reply 'mock/echo mock/script openai/ anthropic/'
		return ;;
	--record|--replay) _agentrt_files; return ;;
	--exec) _agentrt_command; return ;;
	--url)
		_agentrt_reply 'http:// https://'
		compopt -o nospace 2>/dev/null
		return
		;;
	*) return 0 ;;
	esac
	_agentrt_reply '-d --db -a --agent -s --session -c --command --agents
	    --tools --mcp --decide-jq --exec --url -m --model --record --replay
	    -h --help -V --version'
}

_agentrt()
{
	local prog=${1:-${COMP_WORDS[0]}} cur cword words=() opt argn args=()

	COMPREPLY=()
	_agentrt_words
	case ${prog##*/} in
	agentrt-session) _agentrt_session ;;
	agentrt-decide) _agentrt_decide ;;
	agentrt-llm) _agentrt_llm ;;
	agentrt-tool) _agentrt_tool ;;
	agentrt-tree) _agentrt_tree ;;
	agentrt-shell) _agentrt_shell ;;
	esac
}

complete -F _agentrt agentrt-session agentrt-decide agentrt-llm \
    agentrt-tool agentrt-tree agentrt-shell
