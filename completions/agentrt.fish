# agentrt.fish - fish completion for the agentrt binaries
#
# One file for all six binaries: make install links it as <binary>.fish, so
# fish loads it whichever binary is completed first, and it registers them
# all.  The options, what their arguments are, and the commands come from
# the binary itself: `BIN --completions` prints them, one line each, from
# the table its --help is made from (the format is in agentrt(7),
# OPTIONS).  What is known only here is how to complete each kind of
# argument.

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

# The name of the global variable that holds $argv[2] of binary $argv[1]:
# fish names take no '-'.
function __agentrt_var
    string join _ __agentrt (string replace -a -- - _ $argv)
end

# Prints the operands on the line of binary $argv[1] so far, the options
# and their arguments left out: for agentrt-session and agentrt-tree, the
# command and then its operands.
function __agentrt_operands
    set -l var (__agentrt_var $argv[1] argopts)
    set -l argopts $$var
    set -l tokens (commandline -opc)
    set -e tokens[1]
    while set -q tokens[1]
        if contains -- $tokens[1] $argopts
            set var (__agentrt_var $argv[1] nargs (string trim -l -c - -- $tokens[1]))
            set -e tokens[1..(math $$var + 1)]
        else if string match -q -- '-?*' $tokens[1]
            set -e tokens[1]
        else
            printf '%s\n' $tokens[1]
            set -e tokens[1]
        end
    end
end

# True when binary $argv[1] has no command on the line yet.
function __agentrt_needs_command
    set -l words (__agentrt_operands $argv[1])
    not set -q words[1]
end

# True when the command on the line of binary $argv[1] is one of the rest.
function __agentrt_using
    set -l words (__agentrt_operands $argv[1])
    set -q words[1]; and contains -- $words[1] $argv[2..-1]
end

# True when the next operand of the command on the line of binary
# $argv[1] is of kind $argv[2] (session, node, file).
function __agentrt_operand_is
    set -l words (__agentrt_operands $argv[1])
    set -q words[1]; or return 1
    set -l var (__agentrt_var $argv[1] cmd $words[1])
    set -q $var; or return 1
    set -l kinds $$var
    set -q kinds[1]; or return 1
    set -l i (count $words)
    if test $i -gt (count $kinds)
        string match -q -- '*...' $kinds[-1]; or return 1
        set i (count $kinds)
    end
    test (string replace -- ... '' $kinds[$i]) = $argv[2]
end

# The abbreviated node ids of the agentrt-tree session on the line, as
# show prints them.
function __agentrt_tree_nodes
    set -l words (__agentrt_operands agentrt-tree)
    set -q words[2]; or return 0
    set -l db (__agentrt_optargs -d --db)[-1]
    set -l args
    test -n "$db"; and set args -d $db
    agentrt-tree $args show $words[2] 2>/dev/null |
        string replace -rf -- '^[^*]*\* \S+ +(\S+).*' '$1'
end

# The complete arguments for an argument of kind $argv[1], with words
# $argv[2].
function __agentrt_kind_args
    switch $argv[1]
        case file
            printf '%s\n' -r -F
        case dir
            printf '%s\n' -x -a '(__fish_complete_directories)'
        case jq-file
            printf '%s\n' -x -a '(__fish_complete_suffix .jq)'
        case at-file
            printf '%s\n' -x -a '(__agentrt_at_files)'
        case agent
            printf '%s\n' -x -a '(__agentrt_agent_names)'
        case session
            printf '%s\n' -x -a '(__agentrt_session_ids)'
        case model words
            printf '%s\n' -x -a $argv[2]
        case command
            printf '%s\n' -x -a '(__fish_complete_command)'
        case url
            printf '%s\n' -x -a 'http:// https://'
        case env
            printf '%s\n' -x -a '(set -nx)'
        case '*'
            printf '%s\n' -x
    end
end

# Registers the completions of binary $argv[1] from its --completions.
function __agentrt_register --argument-names bin
    set -l lines (command $bin --completions 2>/dev/null)
    or return
    set -l cmds
    set -l argopts
    set -l second_text
    for line in $lines
        set -l f (string split \t -- $line)
        if not string match -q -- '-*' $f[1]
            set -a cmds $f[1]
            test $f[2] = -; or set -g (__agentrt_var $bin cmd $f[1]) (string split ' ' -- $f[2])
            continue
        end
        test $f[3] = -; and continue
        set -l kinds (string split ' ' -- $f[3])
        set -a argopts $f[1]
        test $f[2] = -; or set -a argopts $f[2]
        set -g (__agentrt_var $bin nargs (string trim -l -c - -- $f[1])) (count $kinds)
        test $f[2] = -; or set -g (__agentrt_var $bin nargs (string trim -l -c - -- $f[2])) (count $kinds)
        if test (count $kinds) -gt 1; and test $kinds[-1] = text
            set -a second_text $f[1]
        end
    end
    set -g (__agentrt_var $bin argopts) $argopts

    # Files are operands only where a command takes them, or agentrt-shell
    # takes none.
    if set -q cmds[1]; or test $bin = agentrt-shell
        complete -c $bin -f
    end
    for line in $lines
        set -l f (string split \t -- $line)
        if not string match -q -- '-*' $f[1]
            complete -c $bin -n "__agentrt_needs_command $bin" -a $f[1] -d $f[3]
            continue
        end
        set -l args -c $bin -l (string sub -s 3 -- $f[1]) -d $f[7]
        test $f[2] = -; or set -a args -s (string sub -s 2 -- $f[2])
        if test $f[3] != -
            set -l words
            test $f[4] = -; or set words $f[4]
            set -a args (__agentrt_kind_args (string split ' ' -- $f[3])[1] "$words")
        end
        if set -q cmds[1]
            if string match -q '*exits*' -- $f[6]
                set -a args -n "__agentrt_needs_command $bin"
            else if test $f[5] != -
                set -a args -n "__agentrt_using $bin $f[5]"
            end
        end
        complete $args
    end
    if set -q second_text[1]
        complete -c $bin -n "__agentrt_second_arg_of $second_text" -f
    end
    if set -q cmds[1]
        complete -c $bin -n "__agentrt_operand_is $bin session" -a '(__agentrt_session_ids)' -d session
        complete -c $bin -n "__agentrt_operand_is $bin node" -a '(__agentrt_tree_nodes)' -d node
        complete -c $bin -n "__agentrt_operand_is $bin file" -F
    end
end

for bin in agentrt-session agentrt-decide agentrt-llm agentrt-tool agentrt-tree agentrt-shell agentrt-bus agentrt-serve
    __agentrt_register $bin
end
