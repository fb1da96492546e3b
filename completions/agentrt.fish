# agentrt.fish - fish completion for the agentrt binaries
#
# One file for all six binaries: make install links it as <binary>.fish, so
# fish loads it whichever binary is completed first.

# Prints the command of the agentrt-session line being completed (new, ls,
# show, log or rm) and then its arguments so far; fails if there is none yet.
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

# True when a SESSION may come next: any number for rm, one for show and log.
function __agentrt_session_wants_session
    set -l words (__agentrt_session_words)
    or return 1
    set -l cmd $words[1]
    set -e words[1]
    switch $cmd
        case rm
            return 0
        case show log
            while set -q words[1]
                switch $words[1]
                    case --after -d --db
                        set -e words[1..2]
                    case '-*'
                        set -e words[1]
                    case '*'
                        return 1
                end
            end
            return 0
    end
    return 1
end

# The ids of the sessions in the store named by the last -d/--db on the line
# (agentrt-session takes it before or after its command), else the default.
function __agentrt_session_ids
    set -l tokens (commandline -opc)
    set -l db
    set -l i 2
    while test $i -le (count $tokens)
        switch $tokens[$i]
            case -d --db
                set i (math $i + 1)
                set db $tokens[$i]
            case '--db=*'
                set db (string replace -- --db= '' $tokens[$i])
            case '-d?*'
                set db (string sub -s 3 -- $tokens[$i])
        end
        set i (math $i + 1)
    end
    set db (string replace -r -- '^~' $HOME "$db")
    if test -n "$db"
        agentrt-session -d $db ls -q 2>/dev/null
    else
        agentrt-session ls -q 2>/dev/null
    end
end

complete -c agentrt-session -f

complete -c agentrt-session -s d -l db -r -f -a '(__fish_complete_directories)' -d 'use the store in DIR'
complete -c agentrt-session -n __agentrt_session_needs_command -s h -l help -d 'print this help and exit'
complete -c agentrt-session -n __agentrt_session_needs_command -s V -l version -d 'print the version and exit'

complete -c agentrt-session -n __agentrt_session_needs_command -a new -d 'create a session and print its id'
complete -c agentrt-session -n __agentrt_session_needs_command -a ls -d 'list sessions, one JSON object per line'
complete -c agentrt-session -n __agentrt_session_needs_command -a show -d 'print one session as JSON'
complete -c agentrt-session -n __agentrt_session_needs_command -a log -d "print the session's event log as NDJSON"
complete -c agentrt-session -n __agentrt_session_needs_command -a rm -d 'delete sessions and everything recorded of them'

complete -c agentrt-session -n '__agentrt_session_using new' -s a -l agent -x -d 'the agent the session runs'
complete -c agentrt-session -n '__agentrt_session_using new' -l id -x -d "the session's id (default: a fresh UUIDv7)"
complete -c agentrt-session -n '__agentrt_session_using new' -l identity -x -d 'the session owner, {"id":…,"metadata":{…}}'
complete -c agentrt-session -n '__agentrt_session_using ls' -s q -l quiet -d 'print only the ids'
complete -c agentrt-session -n '__agentrt_session_using log' -l after -x -d 'start after event SEQ'
complete -c agentrt-session -n '__agentrt_session_using log' -s f -l follow -d 'keep printing events as they are appended'

complete -c agentrt-session -n __agentrt_session_wants_session -a '(__agentrt_session_ids)' -d session

# The binaries still to come answer only --help and --version.
for __agentrt_bin in agentrt-decide agentrt-llm agentrt-tool agentrt-tree agentrt-shell
    complete -c $__agentrt_bin -l help -d 'print the help and exit'
    complete -c $__agentrt_bin -l version -d 'print the version and exit'
end
set -e __agentrt_bin
