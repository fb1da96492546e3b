/* engine.h - the engine: inputs in, decisions and calls out, all recorded */
#ifndef ART_ENGINE_H
#define ART_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include <jv.h>

#include "clock.h"
#include "err.h"
#include "ids.h"
#include "store.h"

/*
 * The engine turns bus lines (client inputs, decision responses, call
 * settles, token deltas, error lines) into recorded events, and plans
 * what goes out next: at most one live decision per session, model calls
 * for the llm stage, timers for deadlines and retries.  Every step is one
 * write transaction (a batch of lines is one for them all); the lines it
 * produces are handed out only after the transaction committed
 * (art_engine_output), so nothing is emitted that is not recorded.  Only a
 * transaction with an effect is synced to disk: a model call, a tool or
 * llm execute decision, a sub-agent starting, a client event a client
 * may act on; the others reach the OS page cache, and a crash of the OS
 * can lose only what the next run derives again.  The engine never does
 * I/O itself.
 */
struct art_engine;

/* Loads agent NAME's file config: a new jv, or jv_invalid() with err. */
typedef jv art_agent_loader(void *ctx, const char *name, struct art_err *);

struct art_engine_opts {
	struct art_store	*store;
	struct art_ids		*ids;
	const struct art_clock	*clock;
	art_agent_loader	*load_agent;
	void			*agent_ctx;
	long			 pid;		/* the driver's, recorded */
	/* Sync every commit, not only those with an effect (a file
	 * system that may reorder writes: see agentrt(7), THE STORE). */
	bool			 sync_always;
};

struct art_engine *art_engine_new(const struct art_engine_opts *);
void	art_engine_free(struct art_engine *);

/*
 * Starts driving a session: sid NULL mints one; a new session (needs
 * agent) records session.created and queues session.start with the agent
 * file's config.  An existing session is taken over from a driver that is
 * gone (err code "busy" when one is alive) and recovered: a live decision
 * is delivered again, calls in flight fail retryably.  The id is copied
 * to out (ART_ID_MAX + 1 bytes).
 */
int	art_engine_start(struct art_engine *, const char *sid,
	    const char *agent, char *out, struct art_err *);
/*
 * art_engine_start(), and then the line first (consumed; jv_null() for
 * none) taken as art_engine_input() takes it.  When the session is made
 * or first started here and first is a client.message or
 * client.messages naming no other session, it is taken in the same
 * commit: a session is never made without the message it was made for.
 * -1 with nothing recorded when that commit fails.
 */
int	art_engine_start_with(struct art_engine *, const char *sid,
	    const char *agent, jv first, char *out, struct art_err *);
/*
 * Stops driving every session: their driver records are cleared, in one
 * commit.  -1 with err when that commit fails: the records stay, naming
 * this process, until another run or serve takes the sessions over (a
 * driver record of a dead process is taken over at once).  The engine
 * drives nothing afterwards, either way.
 */
int	art_engine_stop(struct art_engine *, struct art_err *);

/*
 * Moves sid's head to node (a full id), recording head.moved and voiding
 * the work stranded off the new path, without starting anything: the
 * next run continues from there.  Err code "busy" when a live driver has
 * the session, "not_found" when it or node is unknown.  Moving to the
 * head itself records nothing.
 */
int	art_engine_checkout(struct art_engine *, const char *sid,
	    const char *node, struct art_err *);

/*
 * Stops sid's work: its live decision and queue dropped, open calls
 * voided (a voided sub-agent cancels its child session, and so on down),
 * its running turn failed with why.  Err code "busy" when a live driver
 * has the session.  An idle session records nothing.
 */
int	art_engine_cancel(struct art_engine *, const char *sid,
	    const char *why, struct art_err *);

/*
 * Takes one bus line (consumed) for session sid (when the line names
 * none; an interrupt.resume naming none goes to the driven session that
 * holds its interrupt).  Bad lines are recorded as error events, never fatal: -1 only
 * when the store fails (err says why).
 */
int	art_engine_input(struct art_engine *, const char *sid, jv line,
	    struct art_err *);
/*
 * Takes the lines (an array, consumed) one loop iteration read, each as
 * art_engine_input() would, in order, but all in one write transaction:
 * one commit, and at most one sync, for the lot.  Their output is handed
 * out only after that commit.  When a line is refused (a response that
 * cannot apply), the transaction is undone and the lines are taken one
 * at a time instead, so the refusal is recorded as it would be alone.
 * -1 only when the store fails.
 */
int	art_engine_input_batch(struct art_engine *, const char *sid, jv lines,
	    struct art_err *);
/*
 * Whether art_engine_input() knows lines of type; a line of another type
 * is recorded as an error event (code "unknown_type").
 */
bool	art_engine_takes(const char *type);
/* Fires due timers and dispatches what can go out; -1 on store failure. */
int	art_engine_tick(struct art_engine *, struct art_err *);
/* When the next timer is due (clock ms), or -1 when none is set. */
int64_t	art_engine_wake(const struct art_engine *);

/*
 * Lines for the ring and events for clients, since the last call.  A
 * line is an object, or a string: the line's JSON text, already made (a
 * model request whose prompt is built from the last one's text).
 */
jv	art_engine_output(struct art_engine *);
jv	art_engine_events(struct art_engine *);

/*
 * The live decision of sid as the seed's whole DecisionRequest line, read
 * from the store in one read transaction (what the ring carries by
 * reference, made whole): jv_null() when sid has no live decision,
 * jv_invalid() with err ("not_found" for an unknown session).
 */
jv	art_engine_request(struct art_store *, const char *sid,
	    struct art_err *);

/*
 * A long-lived engine (agentrt-session serve) drives whichever sessions
 * its lines name.  art_engine_place() makes sid driven before a line of
 * type (either may be NULL) for it is taken: a session already driven
 * is left as it is; an existing one is taken over and recovered as
 * art_engine_start() does, its root (ancestry's first) first, so the
 * root's running children come with it; an unknown one is made with
 * agent when type is a client line ("client.*") and agent is given.
 * Returns 0 when sid is driven now; 1 when the line is refused, err
 * saying why: code "no_session" (sid NULL), "bad_session" (not a valid
 * id), "unknown_session" (unknown, and not a client line naming an
 * agent), "no_agent" or "bad_agent" (the agent file), "busy" (another
 * live process drives it), "exists" (raced); -1 when the store fails.
 * Nothing is recorded for a refused line.
 */
int	art_engine_place(struct art_engine *, const char *sid,
	    const char *type, const char *agent, struct art_err *);
/*
 * The store's orphans: every session with work in flight (a running
 * turn, a live or queued decision, an open call) and no live driver (no
 * driver record, a dead pid, or this engine's pid), as a new array of
 * ids in key order, read in one read transaction without reading any
 * log; jv_invalid() with err when the store fails.  Each is for
 * art_engine_place(), which recovers it as run -s does.
 */
jv	art_engine_orphans(struct art_engine *, struct art_err *);
/*
 * Stops driving every driven session with nothing in flight (its state
 * is not ART_ENGINE_BUSY: completed, failed or parked), and no driven
 * ancestor busy: its driver record is cleared, and it leaves the
 * sessions driven with its timers.  A later art_engine_place() takes it
 * on again.  Returns how many were let go, or -1 when the store fails
 * (nothing is let go then).
 */
int	art_engine_release_idle(struct art_engine *, struct art_err *);
/* How many sessions the engine drives, and whether it drives sid. */
int	art_engine_driven(const struct art_engine *);
bool	art_engine_drives(const struct art_engine *, const char *sid);

enum art_engine_state {
	ART_ENGINE_BUSY,	/* work in flight or queued */
	ART_ENGINE_DONE,	/* the turn completed */
	ART_ENGINE_FAILED,	/* the turn failed */
	ART_ENGINE_PARKED	/* waiting for outside input (interrupt, client) */
};
/* What the driven sessions are doing, for the exit decision. */
enum art_engine_state art_engine_state(struct art_engine *,
	    struct art_err *);
/*
 * What session sid is doing, driven or not (serve tells its clients when
 * a session stops being busy).  ART_ENGINE_FAILED, with err, also when
 * the store cannot be read.
 */
enum art_engine_state art_engine_session_state(struct art_engine *,
	    const char *sid, struct art_err *);

#endif
