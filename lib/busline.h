/* busline.h - what a ring line is called when it crosses hosts on NATS */
#ifndef ART_BUSLINE_H
#define ART_BUSLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/*
 * agentrt-bus carries ring lines between hosts on NATS JetStream
 * (agentrt(7), BEYOND ONE MACHINE).  This module is the part of it that
 * needs no server: the de-duplication id a line is published under, the
 * subject a template names for it, and the shard a session hashes to.
 * Nothing here does I/O.
 */

/* The longest Nats-Msg-Id made, with its NUL. */
#define ART_BUSLINE_ID_MAX	256
/* The longest subject a template expands to, with its NUL. */
#define ART_BUSLINE_SUBJECT_MAX	256

/*
 * The Nats-Msg-Id line (borrowed) is published under, written to out
 * (ART_BUSLINE_ID_MAX bytes): one id for every copy of the same step, so
 * JetStream keeps one when a line is published again (a publish retried
 * after a lost ack, a worker answering a redelivered request), and a
 * different id for a new attempt of it.  "TYPE:SESSION:KEY" where KEY is
 *   decision.request         decision_id:attempts
 *   decision.response        decision_id:H
 *   llm.request              id:attempt
 *   llm.result, llm.error,
 *   tool.result, tool.error  id:attempt
 *   client.*, interrupt.resume
 *                            turn_id:H, or interrupt_id:H (H: the first 16
 *                            hex digits of the SHA-256 of the line's bytes)
 *   error                    H
 * text and len are the line's bytes as read.  Returns false (out[0] is
 * NUL) for a line that names no such ids (a token delta, a client line
 * with no turn_id, a line of an unknown type): it is published with no
 * id, never de-duplicated, since two such lines may be meant twice.
 */
bool	art_busline_msg_id(const jv *line, const char *text, size_t len,
	    char *out);

/*
 * The key an acknowledgement of line (borrowed) is matched by, written to
 * out (ART_BUSLINE_ID_MAX bytes): "SESSION:DECISION_ID" for
 * decision.request and decision.response, "SESSION:ID:ATTEMPT" for
 * llm.request, llm.result and llm.error (ATTEMPT is 1 when absent).
 * Returns false (out[0] is NUL) for every other line.
 */
bool	art_busline_ack_key(const jv *line, char *out);

/*
 * The shard a session belongs to when nothing assigns it: shards[i] for
 * i = FNV-1a 64 of sid mod n, stable across hosts and versions.  n > 0.
 */
const char *art_busline_shard(const char *sid, const char *const *shards,
	    size_t n);

/*
 * Expands template (borrowed) into out (ART_BUSLINE_SUBJECT_MAX bytes):
 * "{session}" becomes sid, "{owner}" becomes owner; other text is kept.
 * -1 with err ("bad_subject") when a placeholder is needed but NULL, when
 * the result is too long, or when it is not a valid NATS subject (empty
 * tokens, spaces, or '*' / '>' in a subject to publish to; a session id
 * holding '.', '*', '>' or a space).
 */
int	art_busline_subject(const char *template, const char *sid,
	    const char *owner, char *out, struct art_err *);

/* Does template name {owner} or {session}? */
bool	art_busline_subject_has(const char *template, const char *what);

/*
 * Parses "--shards" text, "a,b,c", into a NULL-terminated array of
 * strdup'd names the caller frees with art_busline_shards_free; NULL
 * with err ("bad_shards") for an empty list or name, a duplicate, or a
 * name that is not one subject token.
 */
char  **art_busline_shards(const char *text, size_t *n, struct art_err *);
void	art_busline_shards_free(char **);

#endif
