/* views.h - the engine's events folded into calls, queue and interrupts */
#ifndef ART_VIEWS_H
#define ART_VIEWS_H

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * Folds one recorded engine event into the views beside the message tree:
 * calls (ART_DB_CALLS), the decision queue (ART_DB_PENDING), and, in the
 * session summary s, the live decision ("live"), open interrupts
 * ("interrupts") and the running turn's usage.  s is consumed and the
 * summary as the event leaves it returned, for the caller to write; ev
 * and p (its payload) are borrowed.  Events it does not know return s
 * as it came.  jv_invalid() with err on a store failure.
 */
jv	art_views_apply(struct art_txn *, const char *sid, jv s, const jv *ev,
	    const jv *p, const char *type, struct art_err *);

/* Queue sub-key: priority (0 first) then the queued event's seq. */
#define ART_QUEUE_KEYLEN	9
void	art_views_queue_key(unsigned char key[ART_QUEUE_KEYLEN], int priority,
	    int64_t seq);

#endif
