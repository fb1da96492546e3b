/* agui-run.h - one AG-UI run: its input, and its envelope of events
 *
 * What agentrt-serve does with a request, apart from HTTP.  A client
 * sends AG-UI's RunAgentInput; art_agui_input() makes it the line a
 * session engine takes: a client.messages view of the client's messages
 * (its tools client-handled ones, its state, context and forwardedProps
 * the rest of ClientContext), the run's id its turn_id; or, when it
 * answers the interrupt a run ended on, an interrupt.resume.  threadId
 * is the session.
 *
 * The session's client events come back (man agentrt-session(1),
 * EVENTS) and a run turns them into AG-UI's (lib/agui), inside an
 * envelope that is the request's: RUN_STARTED first, once, with its
 * threadId and runId (a session that goes on with a turn a client tool
 * or an approval parked starts no turn of its own), and RUN_FINISHED
 * or RUN_ERROR last, once.  RUN_FINISHED's outcome is what the run's
 * events make it: the interrupts it parked on (CUSTOM agentrt.interrupt,
 * as AG-UI Interrupts), else success, naming the client tool calls
 * started and not answered.  A run the caller ends (art_agui_run_end)
 * before its session did gets its last event from here.
 *
 * Out: AG-UI events, one JSON text a line, appended to the caller's
 * buffer.  One caller's, in one thread.
 */
#ifndef ART_AGUI_RUN_H
#define ART_AGUI_RUN_H

#include <stdbool.h>

#include <jv.h>

#include "agui.h"
#include "buf.h"
#include "err.h"

/* The longest threadId or runId, in bytes. */
#define ART_AGUI_ID_MAX	255

struct art_agui_ids {
	char	thread[ART_AGUI_ID_MAX + 1];
	char	run[ART_AGUI_ID_MAX + 1];
};

/*
 * The engine line for RunAgentInput in (borrowed), for agent: *line a
 * client.messages or an interrupt.resume, naming session ids->thread;
 * ids filled from threadId and runId.  -1 with err (code "bad_input",
 * a message naming the member and why) when in is no RunAgentInput: a
 * threadId or runId that is not 1-255 bytes without spaces, control
 * characters or '/', messages not an array of messages with a role,
 * tools not an array, a resume not one entry with an interruptId and a
 * status (resolved, or cancelled: answered as a refusal).
 */
int	art_agui_input(const jv *in, const char *agent,
	    struct art_agui_ids *ids, jv *line, struct art_err *);

struct art_agui_run;

/* A run of thread; NULL when out of memory.  opts as art_agui_new's. */
struct art_agui_run *art_agui_run_new(const char *thread, const char *run,
	    const struct art_agui_opts *);
void	art_agui_run_free(struct art_agui_run *);

/* Appends RUN_STARTED, unless the run has started.  0, or -1 (memory). */
int	art_agui_run_start(struct art_agui_run *, struct art_buf *out);
/*
 * One client event (borrowed) of the run's session, or of a sub-agent
 * of it: what it is in AG-UI appended to out; nothing once the run has
 * ended.  0, or -1 when out of memory.
 */
int	art_agui_run_event(struct art_agui_run *, const jv *ev,
	    struct art_buf *out);

enum art_agui_end_how {
	ART_AGUI_END_IDLE,	/* the session has nothing in flight */
	ART_AGUI_END_CANCELLED,	/* stopped: its client went, or the server */
	ART_AGUI_END_FAILED	/* its engine went: why is the message */
};
/*
 * Ends the run, if its events have not: IDLE as a stream that ends with
 * the run open is ended (a turn parked on a client tool: RUN_FINISHED,
 * the calls pending named), CANCELLED with RUN_FINISHED outcome
 * cancelled, FAILED with RUN_ERROR (code run_failed, message why).
 * 0, or -1 when out of memory.
 */
int	art_agui_run_end(struct art_agui_run *, enum art_agui_end_how,
	    const char *why, struct art_buf *out);
bool	art_agui_run_ended(const struct art_agui_run *);
/* How it ended: "success", "interrupt", "cancelled" or "error". */
const char *art_agui_run_outcome(const struct art_agui_run *);

#endif
