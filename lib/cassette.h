/* cassette.h - model exchanges kept in a file and played back */
#ifndef ART_CASSETTE_H
#define ART_CASSETTE_H

#include <stdbool.h>

#include <jv.h>

#include "err.h"

/*
 * A cassette is an NDJSON file, one exchange a line:
 *
 *	{"type":"llm.exchange","key":"<sha-256 hex>","model":"openai/x",
 *	 "request":{...},"stream":true,"deltas":[...],
 *	 "response":{...}}		(or "error":{...} for a failure)
 *
 * request is what the call asked (an LlmRequest, or a provider's own body
 * for a worker-run call with a format), never an HTTP header: no key or
 * token can reach a cassette.  key is the SHA-256 of the canonical JSON
 * of [model, request] with its messages as art_cassette_messages() makes
 * them, so the same conversation replayed in a new session (new ids,
 * parallel tool answers folded in another order) finds its answers.
 * Exchanges with one key play back in the order they were recorded; once
 * all have played, the last one answers again.
 */

#define ART_CASSETTE_KEY_LEN	64

struct art_cassette;

/*
 * Loads the cassette at path.  NULL with err "bad_cassette" naming the
 * file and line of anything that is not an exchange, or "nomem".
 */
struct art_cassette *art_cassette_load(const char *path, struct art_err *);
void	art_cassette_free(struct art_cassette *);

/* How many exchanges it holds. */
size_t	art_cassette_size(const struct art_cassette *);

/*
 * A conversation's messages (consumed) as a key compares them: without
 * their "id"s, and each run of consecutive tool messages sorted by
 * tool_call_id (parallel calls finish, and are recorded, in any order).
 */
jv	art_cassette_messages(jv msgs);

/* The key of model and request (borrowed) into hex (NUL-terminated). */
void	art_cassette_key(const char *model, const jv *request,
	    char hex[ART_CASSETTE_KEY_LEN + 1]);

/*
 * The exchange to play for model and request: its line (a new jv, with
 * deltas, and response or error), or jv_invalid() when none was recorded.
 */
jv	art_cassette_next(struct art_cassette *, const char *model,
	    const jv *request);

/*
 * The line recording an exchange; every argument is borrowed, and exactly
 * one of response and error is an object.
 */
jv	art_cassette_line(const char *model, const jv *request, bool stream,
	    const jv *deltas, const jv *response, const jv *error);

/*
 * Appends line (borrowed) and a newline to fd in one write(2), so lines
 * from processes sharing an O_APPEND file never interleave.  -1 with err.
 */
int	art_cassette_append(int fd, const jv *line, struct art_err *);

#endif
