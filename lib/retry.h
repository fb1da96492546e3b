/* retry.h - retry policies, backoff and deadlines for calls and decisions */
#ifndef ART_RETRY_H
#define ART_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/* The seed's RetryPolicy; timeout_secs < 0 means unbounded. */
struct art_retry {
	double	timeout_secs;
	int	max_retries;	/* retries after the first attempt */
	double	backoff_base_secs;
	double	backoff_max_secs;
};

enum art_call_kind {
	ART_KIND_LLM,
	ART_KIND_TOOL,		/* worker-handled tool */
	ART_KIND_CLIENT_TOOL,	/* client-handled tool: may wait on a person */
	ART_KIND_SUB_AGENT,	/* a child session's turn */
	ART_KIND_DECISION
};

/* PROTOCOL-NOTES.md §4's defaults for a kind. */
void	art_retry_default(struct art_retry *, enum art_call_kind);
/*
 * Lays the fields policy (borrowed; null or absent: nothing) holds over
 * r.  -1 with err code "bad_field" when a field has the wrong type.
 */
int	art_retry_layer(struct art_retry *, const jv *policy,
	    struct art_err *);
/*
 * Is policy (borrowed) a whole seed RetryPolicy, as an agent file or an
 * action must give it?  null or absent passes (no policy); an object
 * needs all four members (timeout_secs, max_retries, backoff_base_secs,
 * backoff_max_secs) of the right types.  -1 with err "bad_field" naming
 * the first member missing or mistyped.  art_retry_layer() itself
 * takes a partial policy, for what the engine layers internally.
 */
int	art_retry_check(const jv *policy, struct art_err *);
/* The policy as the seed's JSON. */
jv	art_retry_json(const struct art_retry *);
/* May attempt (1 first) be followed by another? */
bool	art_retry_again(const struct art_retry *, int64_t attempt);
/* The wait before attempt + 1, in ms: min(base^attempt, max) seconds. */
int64_t	art_retry_backoff_ms(const struct art_retry *, int64_t attempt);
/* The attempt's deadline from now, or -1 when unbounded. */
int64_t	art_retry_deadline_ms(const struct art_retry *, int64_t now_ms);

#endif
