/* agent.h - agent files: agents/NAME.json holding an AgentConfig */
#ifndef ART_AGENT_H
#define ART_AGENT_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

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
 * What config's tool schemas will not check: one line per tool and schema
 * ("tool 'calc' input: not checked: if, then" for keywords the validator
 * does not implement, "tool 'calc' output: <why>" for a schema it cannot
 * use), so a caller can say so once.  A new array, empty when all is well.
 */
jv	art_agent_schema_notes(const jv *config);
/* Checks config (borrowed) is an AgentConfig; -1 with "bad_agent". */
int	art_agent_check(const jv *config, struct art_err *);

#endif
