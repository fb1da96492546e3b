/* request.h - the seed's full shape of what the ring carries by reference */
#ifndef ART_REQUEST_H
#define ART_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "propose.h"
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

/*
 * Does the line (borrowed) name what it leaves out by reference: a
 * decision.request its place in the store, an llm.request the config
 * version whose tools it sends ("ref": {store, config})?
 */
bool	art_request_by_ref(const jv *line);

/*
 * Each configuration a session's model calls were sent with is kept under
 * its version (art_propose_config_version) in the session's versions
 * (kind 'c', then the version's hex digits), so an llm.request on the
 * ring can name its tools by version instead of carrying them.
 */
#define ART_REQUEST_CONFIG_KIND		'c'
#define ART_REQUEST_CONFIG_KEY_MAX	(ART_CONFIG_VERSION_LEN + 1)
/* The sub-key of version in key; 0 when version is no version. */
size_t	art_request_config_key(const char *version,
	    unsigned char key[ART_REQUEST_CONFIG_KEY_MAX]);
/* The config kept under version for sid; err "not_found" when none. */
jv	art_request_config(struct art_txn *, const char *sid,
	    const char *version, struct art_err *);

/*
 * An llm.request by reference (borrowed) comes back with the tools of the
 * config version it names, and without "ref": the seed's LlmRequest line.
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
/*
 * A recorded request (consumed) whose tools are its config's, named by
 * version ("config": request.h above), with the tools back where the
 * version was; any other comes back as it is.  jv_invalid() with err
 * when the version cannot be read.
 */
jv	art_request_tools(struct art_txn *, const char *sid, jv req,
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

/*
 * What a stage that meets by-reference lines keeps between them: the
 * store the last one named, opened once, and the tools of the last config
 * version an llm.request named, so that a turn's model calls read the
 * store once, not once a step.  Zero it to start.
 */
struct art_request_reader {
	struct art_store	*store;
	char			 version[ART_CONFIG_VERSION_LEN + 1];
	jv			 tools;		/* valid when version[0] */
};
void	art_request_reader_free(struct art_request_reader *);
/*
 * The line (borrowed) made whole, as art_request_whole() makes it, in one
 * read transaction of the store its "ref" names; a line not by reference
 * comes back as it is.  jv_invalid() with err code "bad_request" (or
 * "nomem") when that cannot be done.
 */
jv	art_request_read(struct art_request_reader *, const jv *line,
	    struct art_err *);

#endif
