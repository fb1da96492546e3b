/* tooltape.h - tool calls' answers kept in a file and played back */
#ifndef ART_TOOLTAPE_H
#define ART_TOOLTAPE_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

/*
 * A tape is an NDJSON file, one answered tool call a line:
 *
 *	{"type":"tool.exchange","key":"<sha-256 hex>","name":"calc",
 *	 "arguments":{...},"result":...}
 *	{"type":"tool.exchange",...,"error":{"error":"...","retryable":false}}
 *
 * arguments are the call's as art_tooltape_args() takes them from the
 * trigger, so never the call's id, a session id, or anything of the
 * environment: no key or token can reach a tape.  key is the SHA-256 of
 * the canonical JSON of [name, arguments], so the same call made in a new
 * session (new call ids, arguments in another key order) finds its answer.
 * Exchanges with one key play back in the order they were recorded; once
 * all have played, the last one answers again.  A loaded tape's keys are
 * computed again from name and arguments, so a tape edited by hand still
 * plays.
 */

#define ART_TOOLTAPE_KEY_LEN	64

struct art_tooltape;

/*
 * Loads the tape at path.  NULL with err "bad_tape" naming the file and
 * line of anything that is not an exchange ("tape FILE:LINE: why"), or
 * "nomem".
 */
struct art_tooltape *art_tooltape_load(const char *path, struct art_err *);
void	art_tooltape_free(struct art_tooltape *);

/* How many exchanges it holds. */
size_t	art_tooltape_size(const struct art_tooltape *);

/*
 * The arguments of the tool.execute trigger (borrowed) as a tape keeps
 * them, a new jv: its "input"'s "value" when that is an object, else its
 * "arguments" string parsed when that is a JSON object, else that string
 * as it is (else the field as it is, null when absent).
 */
jv	art_tooltape_args(const jv *trigger);

/* The key of name and args (borrowed) into hex (NUL-terminated). */
void	art_tooltape_key(const char *name, const jv *args,
	    char hex[ART_TOOLTAPE_KEY_LEN + 1]);

/*
 * The exchange to play for name and args (borrowed): its line (a new jv),
 * or jv_invalid() when none was recorded.
 */
jv	art_tooltape_next(struct art_tooltape *, const char *name,
	    const jv *args);

/*
 * The line recording a call's answer; every argument is borrowed.  answer
 * is a tool.result or tool.error, a decision action or a settle line
 * alike: its "result", or its "error" and "retryable", are what is kept.
 * jv_invalid() when answer is neither.
 */
jv	art_tooltape_line(const char *name, const jv *args, const jv *answer);

/*
 * The decision action that plays the exchange line (borrowed), a new jv:
 * {"type":"tool.result","result":...} or
 * {"type":"tool.error","error":"...","retryable":B}.
 */
jv	art_tooltape_action(const jv *line);

/*
 * Appends line (borrowed) and a newline to fd in one write(2), so lines
 * from processes sharing an O_APPEND file never interleave.  -1 with err.
 */
int	art_tooltape_append(int fd, const jv *line, struct art_err *);

#endif
