/* reconcile.h - a view of the conversation written into the message tree */
#ifndef ART_RECONCILE_H
#define ART_RECONCILE_H

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * The index of the first message of view (borrowed) that is news: the
 * first with no id or an id unknown anywhere in sid's tree.  len(view)
 * when every message is known.  -1 on a store failure.
 */
int	art_reconcile_news_from(struct art_txn *, const char *sid,
	    const jv *view, struct art_err *);

/*
 * Checks that view is an array of messages (objects with a role of
 * system, user, assistant or tool, and an id, when present, that is a
 * usable string).  -1 with err code "bad_response" naming the index.
 */
int	art_reconcile_check(const jv *view, struct art_err *);

/*
 * A client's tool message names its call, not always its node: one whose
 * id is missing or unknown but whose tool_call_id already has a recorded
 * tool-result node adopts that node's id (a node on the path root..head
 * first, else the last in id order: the latest recorded, as the engine's
 * ids are UUIDv7), so an echo of the conversation reads
 * as a resend, not a fork (PROTOCOL-NOTES.md §3).  Nothing is dropped.
 * head may be NULL.  A new array, or jv_invalid() on a store failure.
 */
jv	art_reconcile_normalize(struct art_txn *, const char *sid,
	    const jv *view, const char *head, struct art_err *);

/*
 * Calls mint(ctx, buf) for a fresh node id, and record(ctx, payload) to
 * record an event (message.new or head.moved).  Both return -1 on failure.
 */
struct art_reconcile_ops {
	int	(*mint)(void *ctx, char *buf);
	int	(*record)(void *ctx, jv payload);
	void	*ctx;
};

/*
 * Writes view (borrowed) into sid's tree (PROTOCOL-NOTES.md §3): the
 * known-id prefix continues, the first unknown or id-less message starts
 * the news, and every later message is news too (a known id there is
 * re-recorded under a fresh one).  A view that writes nothing but ends
 * elsewhere moves the head; an empty view does nothing.  Returns the
 * number of messages written, or -1.
 */
int	art_reconcile_apply(struct art_txn *, const char *sid, const jv *view,
	    const char *head, const struct art_reconcile_ops *,
	    struct art_err *);
/*
 * The same for the view path(after) + news without reading the path:
 * news (borrowed) continue the node after (NULL: from the root), in
 * O(news).  err code "not_found" when after is not a node.
 */
int	art_reconcile_apply_after(struct art_txn *, const char *sid,
	    const jv *news, const char *after, const char *head,
	    const struct art_reconcile_ops *, struct art_err *);

#endif
