/* request.h - the seed's full shape of what the ring carries by reference */
#ifndef ART_REQUEST_H
#define ART_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * The ring's stages share the store, so a line on the ring need not carry
 * what the store holds (DESIGN.md §2.1).  A decision.request on the ring
 * names its place in the store ("ref": {head, seq}: the head and the log
 * position it was built at) instead of carrying the conversation, the
 * tree, the state and the config, and its proposal holds only what is
 * new; a model call's recorded request may name its messages by
 * reference ("prompt": {system?, path}).  These make the seed's shapes
 * again, for a worker, a jq program, a client or a file.
 */

/* Does the decision.request line (borrowed) name its place by reference? */
bool	art_request_by_ref(const jv *line);

/*
 * The seed's full DecisionRequest for a by-reference line (borrowed),
 * read in t (one read transaction) as it stood at the line's position:
 * messages (root to the head), message_tree (the nodes recorded by
 * then), state and agent (resolved at the head, versions up to then),
 * and the proposal made whole (art_propose_expand), keys in the seed's
 * order.  A line not by reference comes back as it is.  jv_invalid()
 * with err on a store failure or an unknown session or head.
 */
jv	art_request_whole(struct art_txn *, const jv *line, struct art_err *);

/*
 * The messages a model call's recorded request (borrowed) sends: its
 * own, or the system prompt it names and the path root..prompt.path.
 */
jv	art_request_prompt(struct art_txn *, const char *sid, const jv *req,
	    struct art_err *);
/* A recorded request (consumed) as the seed's LlmRequest, made whole. */
jv	art_request_llm(struct art_txn *, const char *sid, jv req,
	    struct art_err *);
/*
 * A recorded event (consumed) as clients read it: an llm.call.requested
 * whose request names its messages by reference gets them back.
 */
jv	art_request_event(struct art_txn *, jv event, struct art_err *);
/* art_log_read(), each event as art_request_event() gives it. */
jv	art_request_log_read(struct art_txn *, const char *sid, uint64_t after,
	    size_t max, struct art_err *);

#endif
