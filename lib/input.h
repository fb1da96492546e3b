/* input.h - a filter's input: the named files in turn, else stdin */
#ifndef ART_INPUT_H
#define ART_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "ndjson.h"

/*
 * A filter reads the files named on its command line one after another,
 * "-" being the standard input, and the standard input alone when none is
 * named.  A file that cannot be opened or read is reported and the next
 * is read; at the end art_input_failed() says whether any was.  Each file
 * has an ndjson reader of its own, so lines are numbered and named per
 * file ("<stdin>" for the standard input).  The input reads the current
 * file with read(2) and feeds its reader, so a caller with a poll loop
 * reads only when poll says so and never blocks; the standard input is
 * never made non-blocking, since its open file description may be shared
 * with a terminal or a shell.  Files are opened close-on-exec.  One
 * thread; a child forked while it is open gets no descriptor of it past
 * exec.
 */
struct art_input;

/*
 * An input of files, a NULL-terminated list borrowed for the input's life
 * (NULL or empty: the standard input alone).  Each file's reader is made
 * with max_line and flags as art_ndjson_reader_new() takes them.  verb
 * names the failed action when a file cannot be opened ("open", "read":
 * what the command has always said).  Nothing is opened yet.  NULL when
 * out of memory.
 */
struct art_input *art_input_new(char *const *files, size_t max_line,
	    unsigned flags, const char *verb);
/* Closes the current file (never the standard input).  NULL does nothing. */
void	art_input_free(struct art_input *);

/* The filter each file's reader gets (art_ndjson_set_filter()). */
void	art_input_set_filter(struct art_input *, art_ndjson_want_fn *,
	    void *ctx);

/*
 * Closes the current file, if any, and opens the next: 1 when one is
 * open, 0 when every file has been read.  -1 with err "open" ("<verb>
 * 'PATH': why") when the next cannot be opened: it is skipped and counts
 * as failed, and the call after goes on with the one after it.  -1 with
 * err "nomem" when out of memory.
 */
int	art_input_open(struct art_input *, struct art_err *);

/*
 * Reads once from the current file and feeds its reader.  1 when the read
 * is done (bytes came, or with wait false there were none to read just
 * now, or a signal came): take the reader's lines with art_ndjson_next()
 * until ART_NDJSON_AGAIN.  0 at the end of the file, and -1 with err "io"
 * ("read NAME: why") when reading failed, which counts as failed: the
 * reader has then been told the end, so take its last lines until
 * ART_NDJSON_EOF and art_input_open() the next.  -1 with err "nomem" when
 * out of memory.  With wait, a descriptor with nothing to read is waited
 * for with poll(2), so a non-blocking one reads as a blocking one does.
 */
int	art_input_read(struct art_input *, bool wait, struct art_err *);

/* The current file's descriptor, for poll(2); -1 when none is open. */
int	art_input_fd(const struct art_input *);
/* The current file's reader (its lines), NULL when none is open. */
struct art_ndjson_reader *art_input_reader(const struct art_input *);
/* The current file's name in messages ("<stdin>" for "-"); "" if none. */
const char *art_input_name(const struct art_input *);
/* Whether a file could not be opened or read. */
bool	art_input_failed(const struct art_input *);

#endif
