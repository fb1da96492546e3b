# agentrt.fish - fish completion for the agentrt binaries
#
# One file for all six binaries: make install links it as <binary>.fish, so
# fish loads it whichever binary is completed first.

# Prints the command of the agentrt-session line being completed (new, ls,
# show, log, rm, cancel, export, import, checkpoint, restore, replay or run)
# and then its arguments so far; fails if there is none yet.
function __agentrt_session_words
    set -l tokens (commandline -opc)
    set -e tokens[1]
    while set -q tokens[1]
        switch $tokens[1]
            case -d --db
                set -e tokens[1..2]
            case '-*'
                set -e tokens[1]
            case '*'
                printf '%s\n' $tokens
                return 0
        end
    end
    return 1
end

# True when no command has been given yet.
function __agentrt_session_needs_command
    not __agentrt_session_words >/dev/null
end

# True when the command is one of the arguments.
function __agentrt_session_using
    set -l words (__agentrt_session_words)
    or return 1
    contains -- $words[1] $argv
end

# True when the command's words after it (options and their arguments
# left out) hold no argument yet.
function __agentrt_session_no_arg_yet
    set -l words (__agentrt_session_words)
    or return 1
    set -e words[1]
    while set -q words[1]
        switch $words[1]
            case --after -d --db -o --output --as --policy --agents
                set -e words[1..2]
            case '-*'
                set -e words[1]
            case '*'
                return 1
        end
    end
    return 0
end

# True when a SESSION may come next: any number for rm and cancel, one for
# show, request, log, export and checkpoint.
function __agentrt_session_wants_session
    if __agentrt_session_using rm cancel
        return 0
    end
    __agentrt_session_using show request log export checkpoint
    and __agentrt_session_no_arg_yet
end

# True when the FILE of import, restore or replay may come next.
function __agentrt_session_wants_file
    __agentrt_session_using import restore replay
    and __agentrt_session_no_arg_yet
end

# Prints the argument of each of the options given (long ones, or short
# ones with the argument attached) on the line before the cursor, with a
# leading ~ expanded: __agentrt_optargs -d --db prints the stores named.
function __agentrt_optargs
    set -l tokens (commandline -opc)
    set -l i 2
    while test $i -le (count $tokens)
        set -l t $tokens[$i]
        for o in $argv
            set -l v
            if test "$t" = $o
                set i (math $i + 1)
                set -q tokens[$i]; or break
                set v $tokens[$i]
            else if string match -q -- "$o=?*" $t; and string match -q -- '--*' $o
                set v (string sub -s (math (string length -- $o) + 2) -- $t)
            else if string match -qr -- '^-[^-]$' $o; and string match -q -- "$o?*" $t
                set v (string sub -s 3 -- $t)
            else
                continue
            end
            string replace -r -- '^~' $HOME $v
            break
        end
        set i (math $i + 1)
    end
end

# The ids of the sessions in the store named by the last -d/--db on the line
# (agentrt-session takes it before or after its command), else the default.
function __agentrt_session_ids
    set -l db (__agentrt_optargs -d --db)[-1]
    if test -n "$db"
        agentrt-session -d $db ls -q 2>/dev/null
    else
        agentrt-session ls -q 2>/dev/null
    end
end

# The agents agentrt-session run can find: NAME for each NAME.json in each
# --agents DIR on the line, then in $AGENTRT_AGENTS (colon-separated), then
# in $XDG_CONFIG_HOME/agentrt/agents (else ~/.config/agentrt/agents), then
# in ./agents.
function __agentrt_agent_names
    set -l dirs (__agentrt_optargs --agents)
    if set -q AGENTRT_AGENTS
        set -a dirs (string split -n : -- $AGENTRT_AGENTS)
    end
    if string match -q '/*' -- "$XDG_CONFIG_HOME"
        set -a dirs $XDG_CONFIG_HOME/agentrt/agents
    else if test -n "$HOME"
        set -a dirs $HOME/.config/agentrt/agents
    end
    set -a dirs agents
    set -l names
    for d in $dirs
        test -n "$d"; or continue
        for f in $d/*.json
            test -f $f; or continue
            set -a names (string replace -r -- '\.json$' '' (string replace -r -- '.*/' '' $f))
        end
    end
    string match -r -- '^[A-Za-z0-9._:-]+$' $names | sort -u
end

# Client input for --input, or a payload for --payload: JSON text, or @FILE.
function __agentrt_at_files
    set -l cur (string replace -r -- '^--(input|payload)=' '' (commandline -ct))
    switch $cur
        case '' '@*'
            printf '@%s\n' (__fish_complete_path (string sub -s 2 -- $cur))
    end
end

# True when the word being completed is the second argument of one of the
# options given: agentrt-decide --arg NAME VALUE.
function __agentrt_second_arg_of
    set -l tokens (commandline -opc)
    set -q tokens[-2]; or return 1
    contains -- $tokens[-2] $argv; or return 1
    # A NAME that was itself the option's first argument, not the option.
    not set -q tokens[-3]; or not contains -- $tokens[-3] $argv
end

# agentrt-session

complete -c agentrt-session -f

complete -c agentrt-session -s d -l db -x -a '(__fish_complete_directories)' -d 'use the store in DIR'
complete -c agentrt-session -n __agentrt_session_needs_command -s h -l help -d 'print this help and exit'
complete -c agentrt-session -n __agentrt_session_needs_command -s V -l version -d 'print the version and exit'

complete -c agentrt-session -n __agentrt_session_needs_command -a new -d 'create a session and print its id'
complete -c agentrt-session -n __agentrt_session_needs_command -a ls -d 'list sessions, one JSON object per line'
complete -c agentrt-session -n __agentrt_session_needs_command -a show -d 'print one session as JSON'
complete -c agentrt-session -n __agentrt_session_needs_command -a request -d 'print the live decision as a worker receives it'
complete -c agentrt-session -n __agentrt_session_needs_command -a log -d "print the session's event log as NDJSON"
complete -c agentrt-session -n __agentrt_session_needs_command -a rm -d 'delete sessions and everything recorded of them'
complete -c agentrt-session -n __agentrt_session_needs_command -a cancel -d "stop the sessions' running turns and their sub-agents"
complete -c agentrt-session -n __agentrt_session_needs_command -a export -d "print the session's events as NDJSON after a header line"
complete -c agentrt-session -n __agentrt_session_needs_command -a import -d 'recreate the sessions of an export; print their ids'
complete -c agentrt-session -n __agentrt_session_needs_command -a checkpoint -d 'write a binary snapshot of the session and its sub-agents'
complete -c agentrt-session -n __agentrt_session_needs_command -a restore -d 'recreate the sessions of a checkpoint'
complete -c agentrt-session -n __agentrt_session_needs_command -a replay -d "run an export's client inputs again, answered from the recording"
complete -c agentrt-session -n __agentrt_session_needs_command -a run -d 'drive a session on a ring of filters'

complete -c agentrt-session -n '__agentrt_session_using new run' -s a -l agent -x -a '(__agentrt_agent_names)' -d 'the agent the session runs'
complete -c agentrt-session -n '__agentrt_session_using new' -l id -x -d "the session's id (default: a fresh UUIDv7)"
complete -c agentrt-session -n '__agentrt_session_using new' -l identity -x -d 'the session owner, {"id":…,"metadata":{…}}'
complete -c agentrt-session -n '__agentrt_session_using ls' -s q -l quiet -d 'print only the ids'
complete -c agentrt-session -n '__agentrt_session_using log' -l after -x -d 'start after event SEQ'
complete -c agentrt-session -n '__agentrt_session_using log' -s f -l follow -d 'keep printing events as they are appended'
complete -c agentrt-session -n '__agentrt_session_using run' -s s -l session -x -a '(__agentrt_session_ids)' -d 'continue this session'
complete -c agentrt-session -n '__agentrt_session_using run' -s m -l message -x -d 'send a user message'
complete -c agentrt-session -n '__agentrt_session_using run' -l turn-id -x -d "the message's turn id, for idempotency"
complete -c agentrt-session -n '__agentrt_session_using run' -l input -x -a '(__agentrt_at_files)' -d 'send client input lines; @FILE, @- read them'
complete -c agentrt-session -n '__agentrt_session_using run' -l resume -x -d 'resume interrupt ID (of the session or of a sub-agent it waits on)'
complete -c agentrt-session -n '__agentrt_session_using run' -l payload -x -a '(__agentrt_at_files)' -d "the resume's payload, e.g. {\"approved\":true}; @FILE, @- read it"
complete -c agentrt-session -n '__agentrt_session_using run' -l events -r -F -d 'append client events to FILE as NDJSON'
complete -c agentrt-session -n '__agentrt_session_using run replay' -l agents -x -a '(__fish_complete_directories)' -d 'look for NAME.json in DIR first'
complete -c agentrt-session -n '__agentrt_session_using run' -l tools -x -a '(__fish_complete_directories)' -d 'where tools named by name alone are declared'
complete -c agentrt-session -n '__agentrt_session_using run' -l max-line -x -d 'the longest ring line read (default 64M)'
complete -c agentrt-session -n '__agentrt_session_using export' -l children -d "the session's sub-agents too"
complete -c agentrt-session -n '__agentrt_session_using import restore' -l as -x -d 'the new id of the root session'
complete -c agentrt-session -n '__agentrt_session_using checkpoint' -s o -l output -r -F -d 'write it to FILE, not stdout'
complete -c agentrt-session -n '__agentrt_session_using checkpoint' -l hash -d 'print its SHA-256 in hex'
complete -c agentrt-session -n '__agentrt_session_using replay' -l policy -x -a '(__fish_complete_suffix .jq)' -d 'decide with the jq program in FILE'

complete -c agentrt-session -n __agentrt_session_wants_session -a '(__agentrt_session_ids)' -d session
complete -c agentrt-session -n __agentrt_session_wants_file -F

# agentrt-decide: FILE arguments complete as files.

complete -c agentrt-decide -l jq -x -d 'answer with what the jq PROGRAM yields'
complete -c agentrt-decide -s f -l from-file -r -F -d 'read the jq program from FILE'
complete -c agentrt-decide -l exec -x -a '(__fish_complete_command)' -d 'answer with a worker process run by /bin/sh'
complete -c agentrt-decide -l url -x -a 'http:// https://' -d 'answer with an HTTP worker: POST each request to URL'
complete -c agentrt-decide -l signing-secret-env -x -a '(set -nx)' -d '(--url) sign each body with the secret in $VAR'
complete -c agentrt-decide -l arg -x -d 'set $NAME in the program to the string VALUE'
complete -c agentrt-decide -l argjson -x -d 'set $NAME to the JSON value'
complete -c agentrt-decide -l slurpfile -x -d 'set $NAME to an array of the JSON values in FILE'
complete -c agentrt-decide -l rawfile -x -d 'set $NAME to the text of FILE'
complete -c agentrt-decide -n '__agentrt_second_arg_of --arg --argjson' -f
complete -c agentrt-decide -l agent -x -a '(__agentrt_agent_names)' -d 'answer only requests whose agent_id is ID'
complete -c agentrt-decide -l max-line -x -d 'the longest input line (default 64M)'
complete -c agentrt-decide -s h -l help -d 'print this help and exit'
complete -c agentrt-decide -s V -l version -d 'print the version and exit'

# agentrt-llm

complete -c agentrt-llm -s m -l model -x -a 'mock/echo mock/script openai/ anthropic/' -d 'answer every call with MODEL'
complete -c agentrt-llm -l script -r -F -d 'play FILE for every mock/script call'
complete -c agentrt-llm -l record -r -F -d 'append every exchange to the cassette FILE'
complete -c agentrt-llm -l replay -r -F -d 'answer every call from the cassette FILE'
complete -c agentrt-llm -l prices -r -F -d 'add the model prices in FILE'
complete -c agentrt-llm -l max-line -x -d 'the longest input line (default 64M)'
complete -c agentrt-llm -s h -l help -d 'print this help and exit'
complete -c agentrt-llm -s V -l version -d 'print the version and exit'

# agentrt-tool

complete -c agentrt-tool -s t -l tools -x -a '(__fish_complete_directories)' -d 'look for tools in DIR'
complete -c agentrt-tool -l mcp -x -d 'start an MCP server over stdio and serve its tools'
complete -c agentrt-tool -l record -r -F -d "append each call's answer to the tape FILE"
complete -c agentrt-tool -l replay -r -F -d 'answer each call from the tape FILE, running no tool'
complete -c agentrt-tool -l cwd -x -a '(__fish_complete_directories)' -d 'run tools in DIR'
complete -c agentrt-tool -s j -l jobs -x -d 'run at most N executable tools at once'
complete -c agentrt-tool -l timeout -x -d 'time limit of a call whose trigger has no deadline'
complete -c agentrt-tool -l kill-grace -x -d 'wait MS milliseconds between SIGTERM and SIGKILL'
complete -c agentrt-tool -l cpu -x -d 'limit each tool process to SECS seconds of CPU time'
complete -c agentrt-tool -l memory -x -d "limit each tool process's address space to BYTES"
complete -c agentrt-tool -l files -x -d 'limit each tool process to N open files'
complete -c agentrt-tool -l max-output -x -d "keep at most BYTES of a tool's output"
complete -c agentrt-tool -l max-line -x -d 'the longest input line'
complete -c agentrt-tool -s l -l list -d "print the tools' declarations and exit"
complete -c agentrt-tool -s h -l help -d 'print this help and exit'
complete -c agentrt-tool -s V -l version -d 'print the version and exit'

# agentrt-tree

# Prints the command of the agentrt-tree line being completed and then its
# arguments so far, options and their arguments left out; fails if there is
# no command yet.
function __agentrt_tree_words
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l out
    while set -q tokens[1]
        switch $tokens[1]
            case -d --db --format
                set -e tokens[1..2]
            case '-*'
                set -e tokens[1]
            case '*'
                set -a out $tokens[1]
                set -e tokens[1]
        end
    end
    set -q out[1]; or return 1
    printf '%s\n' $out
end

function __agentrt_tree_needs_command
    not __agentrt_tree_words >/dev/null
end

function __agentrt_tree_using
    set -l words (__agentrt_tree_words)
    or return 1
    contains -- $words[1] $argv
end

# True when the next argument is the Nth after the command (1: SESSION) of
# one of the commands given: __agentrt_tree_arg 2 path diff.
function __agentrt_tree_arg
    set -l words (__agentrt_tree_words)
    or return 1
    contains -- $words[1] $argv[2..-1]; or return 1
    test (count $words) -eq $argv[1]
end

# The abbreviated node ids of the session on the line, as show prints them.
function __agentrt_tree_nodes
    set -l words (__agentrt_tree_words)
    or return 0
    set -q words[2]; or return 0
    set -l db (__agentrt_optargs -d --db)[-1]
    set -l args
    test -n "$db"; and set args -d $db
    agentrt-tree $args show $words[2] 2>/dev/null |
        string replace -rf -- '^[^*]*\* \S+ +(\S+).*' '$1'
end

complete -c agentrt-tree -f
complete -c agentrt-tree -s d -l db -x -a '(__fish_complete_directories)' -d 'use the store in DIR'
complete -c agentrt-tree -n __agentrt_tree_needs_command -s h -l help -d 'print this help and exit'
complete -c agentrt-tree -n __agentrt_tree_needs_command -s V -l version -d 'print the version and exit'
complete -c agentrt-tree -n __agentrt_tree_needs_command -a show -d 'draw the tree, one line per message'
complete -c agentrt-tree -n __agentrt_tree_needs_command -a path -d 'print the messages root to NODE as NDJSON'
complete -c agentrt-tree -n __agentrt_tree_needs_command -a branches -d 'print the leaves as NDJSON'
complete -c agentrt-tree -n __agentrt_tree_needs_command -a diff -d 'print the common ancestor of A and B and both tails'
complete -c agentrt-tree -n __agentrt_tree_needs_command -a checkout -d 'move the head to NODE'
complete -c agentrt-tree -n __agentrt_tree_needs_command -a export -d 'print the active path in another shape'
complete -c agentrt-tree -n '__agentrt_tree_using show' -l dot -d 'write Graphviz DOT instead'
complete -c agentrt-tree -n '__agentrt_tree_using export' -l format -x -a 'ndjson openai anthropic markdown' -d 'the shape to write'
complete -c agentrt-tree -n '__agentrt_tree_arg 1 show path branches diff checkout export' -a '(__agentrt_session_ids)' -d session
complete -c agentrt-tree -n '__agentrt_tree_arg 2 path diff checkout' -a '(__agentrt_tree_nodes)' -d node
complete -c agentrt-tree -n '__agentrt_tree_arg 3 diff' -a '(__agentrt_tree_nodes)' -d node

# agentrt-shell: options only, no file arguments.

complete -c agentrt-shell -f
complete -c agentrt-shell -s d -l db -x -a '(__fish_complete_directories)' -d 'use the store in DIR'
complete -c agentrt-shell -s a -l agent -x -a '(__agentrt_agent_names)' -d 'start a new session of AGENT'
complete -c agentrt-shell -s s -l session -x -a '(__agentrt_session_ids)' -d 'continue SESSION (an id or a prefix of one)'
complete -c agentrt-shell -s c -l command -x -d 'send TEXT, print the reply and exit'
complete -c agentrt-shell -l agents -x -a '(__fish_complete_directories)' -d 'look for NAME.json in DIR first'
complete -c agentrt-shell -l tools -x -a '(__fish_complete_directories)' -d 'look for tools in DIR too'
complete -c agentrt-shell -l mcp -x -d 'serve the tools of an MCP server'
complete -c agentrt-shell -l decide-jq -x -d 'decide with a jq program'
complete -c agentrt-shell -l exec -x -a '(__fish_complete_command)' -d 'decide with a worker process'
complete -c agentrt-shell -l url -x -a 'http:// https://' -d 'decide with an HTTP worker'
complete -c agentrt-shell -s m -l model -x -a 'mock/echo mock/script openai/ anthropic/' -d 'answer every model call with MODEL'
complete -c agentrt-shell -l record -r -F -d 'keep every model exchange in the cassette FILE'
complete -c agentrt-shell -l replay -r -F -d 'answer model calls from the cassette FILE'
complete -c agentrt-shell -s h -l help -d 'print this help and exit'
complete -c agentrt-shell -s V -l version -d 'print the version and exit'
