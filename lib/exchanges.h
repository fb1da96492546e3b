/* exchanges.h - recorded answers in an NDJSON file, played back by key */
#ifndef ART_EXCHANGES_H
#define ART_EXCHANGES_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

/*
 * What a cassette (model calls) and a tape (tool calls) share: a file of
 * exchanges, one JSON line each, each found again by a key made from the
 * question it answers.  Exchanges with one key play back in the order
 * they were recorded; once all have played, the last one answers again.
 * Keys are made again when a file loads, so a file edited by hand plays.
 */

#define ART_EXCHANGE_KEY_LEN	64	/* SHA-256 in hex */

struct art_exchanges;

/*
 * Checks one line (borrowed) and writes its key into key; -1 with err
 * (its code is replaced by the loader's) saying what the line lacks.
 */
typedef int art_exchange_check_fn(const jv *line,
    char key[ART_EXCHANGE_KEY_LEN + 1], struct art_err *);

/*
 * Loads path, each line checked by check.  what names the file in
 * messages ("cassette", "tape"); code is err's code for a bad file.
 * NULL with err: code for a file that cannot be read or a bad line
 * ("WHAT PATH:LINE: why"), or "nomem".
 */
struct art_exchanges *art_exchanges_load(const char *path, const char *what,
	    const char *code, art_exchange_check_fn *check, struct art_err *);
void	art_exchanges_free(struct art_exchanges *);
size_t	art_exchanges_size(const struct art_exchanges *);

/* The exchange to play for key (a new jv), or jv_invalid() when none. */
jv	art_exchanges_next(struct art_exchanges *, const char *key);

/*
 * Appends line (borrowed) and a newline to fd in one write(2), so lines
 * from processes sharing an O_APPEND file never interleave.  -1 with err
 * ("io": "write WHAT: why", or "nomem").
 */
int	art_exchanges_append(int fd, const jv *line, const char *what,
	    struct art_err *);

#endif
