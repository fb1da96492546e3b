/* propose.h - what an ordinary tool loop would do next, per trigger */
#ifndef ART_PROPOSE_H
#define ART_PROPOSE_H

#include <stdint.h>

#include <jv.h>

#include "err.h"

struct art_propose_in {
	const jv	*trigger;	/* the decision's trigger */
	const jv	*config;	/* the resolved AgentConfig, or null */
	const jv	*file_config;	/* session.start: the agent file's */
	const jv	*interrupt;	/* interrupt.resumed: the interrupt */
	const char	*head;		/* the recorded head; NULL: no messages */
	const char	*decision_id;	/* names the children it spawns */
	int64_t		 pending_calls;
	/* client.messages: the view's messages before new_from are the
	 * path root..head, so the news alone continue it. */
	int		 view_continues;
	/* The stored llm call (id = an assistant message id), its
	 * "request" as stored, or jv_null(). */
	jv		(*llm_call)(void *ctx, const char *id);
	/* The messages from the assistant message whose tool_calls hold
	 * call id down to the head, or jv_null() when the path has none. */
	jv		(*since_call)(void *ctx, const char *call_id);
	/* The messages a stored request (borrowed) sends, whether it holds
	 * them or names them by reference; not an array on failure. */
	jv		(*prompt)(void *ctx, const jv *request);
	void		*ctx;
};

/*
 * The proposed DecisionResponse (PROTOCOL-NOTES.md §2): {} when the
 * engine has no default.  A proposal does not repeat the conversation:
 * one that adds to it names the head it continues ("messages_after", the
 * head's id or null) and holds only the new messages, and an llm.call
 * whose messages are the engine's default (the config's system prompt,
 * then the active path) leaves them out.  A client view that forks is
 * proposed whole.  Returns a new jv; never fails on well-formed input.
 */
jv	art_propose(const struct art_propose_in *);

/*
 * The seed's full form of a proposal (consumed): messages_after's path
 * (path, borrowed: root..messages_after) before the new messages, and
 * every llm.call without messages given the ones the engine would send
 * (art_propose_prompt of that transcript).  A proposal without
 * messages_after is returned as it is.
 */
jv	art_propose_expand(jv proposed, const jv *path, const jv *config);

/*
 * The same proposal (consumed) as a by-reference line carries it: an
 * llm.call whose tools are the recorded config's (llm_tools, borrowed: its
 * art_propose_llm_tools) leaves them out, since the engine sends the
 * config's tools with a call that names none, and art_propose_expand puts
 * them back.  A proposal without messages_after is returned as it is.
 */
jv	art_propose_by_version(jv proposed, const jv *llm_tools);

/*
 * The configuration's version: the first ART_CONFIG_VERSION_LEN hex
 * digits of the SHA-256 of its JSON text, and a NUL, into out.  Equal
 * configs parsed from equal text have equal versions.  -1, out "", when
 * there is no memory for the text.
 */
#define ART_CONFIG_VERSION_LEN	32
int	art_propose_config_version(const jv *config,
	    char out[ART_CONFIG_VERSION_LEN + 1]);

/*
 * The llm.call an agent config makes for a view: model, the config's
 * system prompt before the view, its tools as LlmTools, stream, retry.
 * With view jv_invalid() the messages are left to the engine's default.
 */
jv	art_propose_llm_call(const jv *config, jv view);
/*
 * The messages the engine's default model call sends for a path
 * (consumed): the config's system prompt, then the path from the start
 * of its prior_turns-th turn before the current one (all of it when the
 * config sets no prior_turns), a turn being a user message and what
 * follows it.  An autonomous agent's plan and step text are the
 * engine's to add (eng_auto_request), to the default call only.
 */
jv	art_propose_prompt(const jv *config, jv path);
/* path (consumed) from the start of the n-th turn before the current. */
jv	art_propose_last_turns(jv path, int64_t n);
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
