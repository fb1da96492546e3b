/* propose.h - what an ordinary tool loop would do next, per trigger */
#ifndef ART_PROPOSE_H
#define ART_PROPOSE_H

#include <stdint.h>

#include <jv.h>

#include "err.h"

struct art_propose_in {
	const jv	*trigger;	/* the decision's trigger */
	const jv	*path;		/* recorded messages, root to head */
	const jv	*config;	/* the resolved AgentConfig, or null */
	const jv	*file_config;	/* session.start: the agent file's */
	const jv	*interrupt;	/* interrupt.resumed: the interrupt */
	const char	*decision_id;	/* names the children it spawns */
	int64_t		 pending_calls;
	/* The stored llm call (id = an assistant message id), or jv_null(). */
	jv		(*llm_call)(void *ctx, const char *id);
	void		*ctx;
};

/*
 * The proposed DecisionResponse (PROTOCOL-NOTES.md §2): {} when the
 * engine has no default.  Every non-empty proposal carries the whole
 * transcript in "messages", so echoing it records only what is new.
 * Returns a new jv; never fails on well-formed input.
 */
jv	art_propose(const struct art_propose_in *);

/*
 * The llm.call an agent config makes for a view: model, the config's
 * system prompt before the view, its tools as LlmTools, stream, retry.
 */
jv	art_propose_llm_call(const jv *config, jv view);
/* AgentConfig tools as LlmTools ({name, description, input?, output?}). */
jv	art_propose_llm_tools(const jv *config);
/* The config's tool named name, or jv_null(). */
jv	art_propose_tool(const jv *config, const char *name);
/*
 * The config's sub-agent named name ({id, description?}; the config may
 * write it as a bare id string), or jv_null().
 */
jv	art_propose_sub_agent(const jv *config, const char *name);
/* Does the config turn on the built-in ask_user tool ("ask_user": true)? */
int	art_propose_asks_user(const jv *config);
/* The built-in ask_user tool's declaration, as an AgentTool. */
jv	art_propose_ask_user_tool(void);
/*
 * A sub-agent's session id: the UUIDv5 of "<decision_id>:<tool_call_id>"
 * in agentrt's namespace, so a redelivered decision opens the same child.
 */
void	art_propose_child_id(const char *decision_id, const char *tool_call_id,
	    char out[37]);

#endif
