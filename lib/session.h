/* session.h - a session: its log folded into views, and what reads them */
#ifndef ART_SESSION_H
#define ART_SESSION_H

#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * Every change to a session is one or more events recorded through
 * art_session_record(): the event is appended to the log and folded into
 * the views (the session's summary, the message tree, state and config
 * versions, turns) in the caller's write transaction.  art_session_apply()
 * is that fold alone, so the views can be rebuilt from the log.
 */

/*
 * Appends payload (consumed; {"type":…,…}) to sid's log and applies it.
 * Returns the event's seq, or -1 (the caller's transaction must then be
 * aborted: art_store_write() does so).  event, when not NULL, receives the
 * recorded event.
 */
int64_t	art_session_record(struct art_txn *, const char *sid, jv payload,
	    jv *event, struct art_err *);
/* The same; summary, when not NULL, receives the session's summary after. */
int64_t	art_session_record_at(struct art_txn *, const char *sid, jv payload,
	    jv *event, jv *summary, struct art_err *);
/* Folds one recorded event (borrowed) into the views. */
int	art_session_apply(struct art_txn *, const jv *event, struct art_err *);

/*
 * Records session.created for a new session.  identity (consumed) is null
 * or {"id"?,"metadata"?}; ancestry (consumed) an array of ancestor ids.
 * -1 with err code "exists" when sid is taken.
 */
int	art_session_create(struct art_txn *, const char *sid,
	    const char *agent_id, jv identity, jv ancestry, struct art_err *);

/*
 * The session's summary {id, agent_id, created, status, head, turn,
 * identity, ancestry, nodes}; jv_invalid() with err code "not_found"
 * ("no session 'X'").
 */
jv	art_session_get(struct art_txn *, const char *sid, struct art_err *);
/*
 * The summary plus what reads resolve on the active path: config, state,
 * plan (autonomous mode's, or null), open calls, turn_status (the turn's "running", "completed", "failed", or
 * null), last_seq.
 */
jv	art_session_show(struct art_txn *, const char *sid, struct art_err *);
/*
 * Every session's summary, oldest first: by "created" (the time of its
 * session.created event), ids breaking ties.
 */
jv	art_session_list(struct art_txn *, struct art_err *);
/*
 * What ls shows of a session, from its summary s (borrowed): id,
 * agent_id, created, status, head and turn as the summary has them, but
 * status "parked" for a session whose turn waits on an open interrupt
 * (an approval, a question, a client's tool); "title", its first user
 * message's text, its first line cut to ART_SESSION_TITLE_MAX bytes at a
 * character's end ("…" after a cut; null before any message); and
 * "updated", when its last event was recorded (null with none).
 * jv_invalid() with err when the store cannot be read.
 */
#define ART_SESSION_TITLE_MAX	60
jv	art_session_row(struct art_txn *, const jv *s, struct art_err *);
/*
 * Whether a message of session sid holds text, case aside (ASCII): 1 or
 * 0, -1 with err.  Every message is read, the tree's branches too.
 */
int	art_session_mentions(struct art_txn *, const char *sid,
	    const char *text, struct art_err *);
/* Deletes the session, its log and its views; "not_found" when absent. */
int	art_session_remove(struct art_txn *, const char *sid,
	    struct art_err *);

/*
 * The nodes of the tool messages answering call tcid, in id order: 1 and
 * *out an array of ids, or 0 and *out invalid when the session predates
 * the index (then only a walk of the tree can tell); -1 on failure.
 * Sessions index their tool messages by tool_call_id beside the versions
 * (kind 't'; the one-byte key "T" marks a session that does).
 */
#define ART_TOOL_INDEX_KIND	't'
#define ART_TOOL_INDEX_MARK	"T"
int	art_session_tool_nodes(struct art_txn *, const char *sid,
	    const char *tcid, jv *out, struct art_err *);

/* The versioned values resolved along a path. */
enum art_version {
	ART_VERSION_STATE = 's',	/* worker.state.updated */
	ART_VERSION_AGENT = 'a',	/* agent.updated */
	ART_VERSION_PLAN = 'p'		/* plan.updated (autonomous mode) */
};
/*
 * The newest version of kind whose anchor is on the path root..head (a
 * null anchor is on every path); jv_null() when none.  O(depth).
 */
jv	art_session_resolve(struct art_txn *, const char *sid,
	    enum art_version, const char *head, struct art_err *);
/* The same, as it stood at log position max_seq (-1: now). */
jv	art_session_resolve_at(struct art_txn *, const char *sid,
	    enum art_version, const char *head, int64_t max_seq,
	    struct art_err *);

#endif
