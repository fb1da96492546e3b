/* agui.h - client events as AG-UI events
 *
 * agentrt-session run --events-format ag-ui writes its client events
 * (man/agentrt-session.1 EVENTS) as the events of AG-UI, the protocol
 * agent front-ends speak (@ag-ui/core 1.0), so any AG-UI client can read
 * a run; agentrt-serve streams them over HTTP.  Events go in one at a
 * time, in order; each appends zero or more AG-UI events, one JSON line
 * each, to a buffer the caller writes out.
 *
 * The order is AG-UI's: everything between RUN_STARTED and RUN_FINISHED
 * (or RUN_ERROR); a text message's START before its CONTENT before its
 * END; a tool call's START, ARGS, END, then its TOOL_CALL_RESULT; every
 * STEP_STARTED finished before the run ends.  A turn is a run (threadId
 * the session, runId the turn); a stream whose first event of the session
 * is not turn.started (a parked turn resumed) opens the run with the
 * first event that names the turn.
 *
 *   turn.started            RUN_STARTED
 *   status thinking/acting  STEP_STARTED "model"/"tool" (the open step
 *                           finished first)
 *   token (text)            TEXT_MESSAGE_START (first), TEXT_MESSAGE_CONTENT
 *   message, assistant      TEXT_MESSAGE_END (streamed), or START, CONTENT
 *                           and END (not); per tool call TOOL_CALL_START,
 *                           TOOL_CALL_ARGS, TOOL_CALL_END
 *   message, tool           TOOL_CALL_RESULT
 *   decomposition           STATE_SNAPSHOT {plan: {goal, todos}}
 *   todo                    STATE_DELTA, a JSON Patch of the todo's status
 *   status suspended        CUSTOM agentrt.interrupt, then RUN_FINISHED
 *                           outcome interrupt
 *   completion              RUN_FINISHED (result, usage) or, failed,
 *                           RUN_ERROR (message, code)
 *   an error refusing input RUN_ERROR (a run opened for it if none is)
 *   anything else           CUSTOM "agentrt." + its type, the event its
 *                           value: metrics, security, warnings, structured
 *                           answers, errors retried, a plan's progress,
 *                           and every event of a sub-agent's session
 *
 * Every event carries AG-UI's timestamp, the "at" (in milliseconds) of
 * the client event it came of, a message or step a later event closes
 * that event's; tokens have no "at", so streamed text has none, and
 * neither has what art_agui_end() says.
 *
 * User messages are not sent as text messages (the client wrote them).
 * Before RUN_FINISHED, MESSAGES_SNAPSHOT carries the session's path whole
 * when the caller can read it (opts path_of), so a client that applies it
 * keeps the thread as the store has it.  A stream that ends with its run
 * open (a turn parked on a client tool ends the session without a
 * status) is finished by art_agui_end(): RUN_FINISHED, outcome success
 * with the client tool calls left pending named; or RUN_ERROR when it
 * ended because the writer failed (a ring closed with the turn in
 * flight).  A renderer is one caller's, in one thread.
 */
#ifndef ART_AGUI_H
#define ART_AGUI_H

#include <jv.h>

#include "buf.h"

struct art_agui_opts {
	/*
	 * The messages root..id of session sid (AG-UI's shape is made of
	 * them here), a new array, or jv_invalid() when they cannot be
	 * read: then no MESSAGES_SNAPSHOT.  NULL: none.
	 */
	jv	(*path_of)(void *ctx, const char *sid, const char *id);
	void	*ctx;
};

struct art_agui;

/* A new encoder, or NULL when out of memory; opts may be NULL. */
struct art_agui *art_agui_new(const struct art_agui_opts *);
void	art_agui_free(struct art_agui *);
/*
 * Appends what event ev (borrowed) is in AG-UI to out.  0, or -1 when out
 * of memory.
 */
int	art_agui_event(struct art_agui *, const jv *ev, struct art_buf *out);
/*
 * The stream ends: the run still open, if any, is finished: RUN_ERROR
 * with error as its message (code "run_failed") when the stream's writer
 * failed, else RUN_FINISHED as above.  0 or -1.
 */
int	art_agui_end(struct art_agui *, const char *error,
	    struct art_buf *out);

/* A recorded message (the seed's shape) as an AG-UI Message; consumed. */
jv	art_agui_message(jv m);

#endif
