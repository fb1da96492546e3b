/* agent.h - agent files: agents/NAME.json holding an AgentConfig
 *
 * Where agent files and tools are looked for, reading them, and what a
 * config names that lives elsewhere: tools declared by name alone, and
 * sub-agents described by their own files.  Nothing here reads the
 * environment: the caller hands in what $AGENTRT_AGENTS, $AGENTRT_TOOLS,
 * $XDG_CONFIG_HOME and $HOME say, so every command searches alike.
 */
#ifndef ART_AGENT_H
#define ART_AGENT_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

/*
 * Where agent files are looked for, in order: the n given (--agents),
 * then each entry of path (colon-separated, as $AGENTRT_AGENTS; empty
 * entries skipped; NULL or "" for none), then xdg/agentrt/agents when xdg
 * ($XDG_CONFIG_HOME) is an absolute path, else home/.config/agentrt/agents
 * when home ($HOME) is not empty, then "agents".  A NULL-terminated array
 * of *len strings in one allocation, which free(3) frees, strings and
 * all; NULL with err "nomem".
 */
const char **art_agent_dirs(const char *const *given, size_t n,
	    const char *path, const char *xdg, const char *home, size_t *len,
	    struct art_err *);
/*
 * Where tools are looked for, as art_tools_find() takes them: the n given
 * (--tools); when there are none, each entry of path (colon-separated, as
 * $AGENTRT_TOOLS; empty entries skipped; NULL or "" for none); when there
 * are still none, "./tools".  A NULL-terminated array in one allocation,
 * which free(3) frees; NULL with err "nomem".
 */
char	**art_agent_tool_dirs(const char *const *given, size_t n,
	    const char *path, struct art_err *);

/*
 * Reads NAME.json from the first of dirs (ndirs of them, searched in
 * order) that has it, and checks it is an AgentConfig: an object with a
 * string "model".  Returns the config (a new jv), or jv_invalid()
 * with err code "no_agent" (no such file: the message lists the dirs
 * searched) or "bad_agent" (unreadable, not JSON, not an AgentConfig).
 */
jv	art_agent_load(const char *const *dirs, size_t ndirs, const char *name,
	    struct art_err *);
/*
 * The agents in dirs (ndirs of them): the names of their NAME.json files,
 * each once, dir by dir in order and sorted within one; a directory that
 * cannot be read has none.  A new array.
 */
jv	art_agent_names(const char *const *dirs, size_t ndirs);
/*
 * What config's tool schemas will not check: one line per tool and schema
 * ("tool 'calc' input: not checked: if, then" for keywords the validator
 * does not implement, "tool 'calc' output: <why>" for a schema it cannot
 * use), so a caller can say so once.  A new array, empty when all is well.
 */
jv	art_agent_schema_notes(const jv *config);
/*
 * The top-level keys of config (borrowed) that nothing reads, each one
 * line, nearest known key when one is within two edits: "unknown key
 * 'tols' (did you mean 'tools'?)", so a caller can warn once.  A new
 * array, sorted by key, empty when all is well.
 */
jv	art_agent_key_notes(const jv *config);
/*
 * Checks config (borrowed) is an AgentConfig: a string "model", provider
 * blocks whose credentials come from the environment, a fallback of
 * provider/name models; the limits max_loops, max_tool_calls,
 * max_turn_ms and tool_result_max_bytes positive integers, prior_turns
 * a non-negative one, max_turn_cost and max_session_cost decimal strings
 * ("0.50"); and each tool's "env" an array of variable names that are
 * no provider key (art_tools_env_check(), or a provider block's
 * api_key_env); execution_mode, autonomous and answer as
 * art_auto_check() takes them.  0, or -1 with "bad_agent" naming the
 * field and why.
 */
int	art_agent_check(const jv *config, struct art_err *);
/*
 * config (consumed; agent's) with each tool it names by name alone
 * ("tools": ["calc"]) replaced by that tool's declaration, as
 * art_tools_declaration() reads it beside the tool found in tool_dirs
 * (NULL-terminated, searched in order), so an agent need not repeat what
 * agentrt-tool --list prints.  A tool given as an object stays as it is.
 * Returns the new config, or jv_invalid() with err "bad_agent" for a name
 * in no tools directory or a declaration whose "env" art_agent_check()
 * would refuse, "bad_declaration" for one that cannot be read, or
 * "nomem".
 */
jv	art_agent_declare_tools(char *const *tool_dirs, const char *agent,
	    jv config, struct art_err *);
/*
 * The built-in chat agent, for a prompt with no agent file (agentrt-shell
 * -m MODEL): {"model": model, "tools": [...]}, no system prompt, and as
 * tools the declaration of every tool in tool_dirs (NULL-terminated, or
 * NULL) that can run, as art_agent_declare_tools() declares a tool named
 * by name; no "tools" when there are none.  Returns the config, checked
 * as art_agent_check() checks an agent file's, or jv_invalid() with err
 * ("bad_agent" for what that check or a tool's declaration refuses,
 * "bad_declaration", "nomem").
 */
jv	art_agent_chat(const char *model, char *const *tool_dirs,
	    struct art_err *);
/*
 * config (consumed) with each sub-agent entry an object, and each whose
 * entry gives no "description" given the one of the child's own agent
 * file (in dirs, ndirs of them), which the model sees on the tool.  A
 * sub-agent whose file is missing or has none stays without one.
 */
jv	art_agent_describe_sub_agents(const char *const *dirs, size_t ndirs,
	    jv config);

#endif
