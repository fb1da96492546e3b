/* log.h - a session's event log: append-only, seq from 1, the truth */
#ifndef ART_LOG_H
#define ART_LOG_H

#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * Appends the event {session_id, seq, occurred_at, turn_id?, payload} in
 * txn, seq one past the session's last (1 for the first), occurred_at from
 * the store's clock.  payload (consumed) is an object with a "type".
 * turn_id may be NULL.  Returns the new seq, or -1.  When event is not
 * NULL it receives the whole event (the caller owns it).  O(log n).
 */
int64_t	art_log_append(struct art_txn *, const char *sid, jv payload,
	    const char *turn_id, jv *event, struct art_err *);
/* The seq of the session's last event, 0 when it has none, -1 on error. */
int64_t	art_log_last_seq(struct art_txn *, const char *sid, struct art_err *);
/*
 * Up to max events (0: all) with seq > after, oldest first, as a new
 * array; jv_invalid() on error.  Bounded reads let a follower print
 * between transactions instead of holding one across its output.
 */
jv	art_log_read(struct art_txn *, const char *sid, uint64_t after,
	    size_t max, struct art_err *);

#endif
