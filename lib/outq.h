/* outq.h - the ring's out-queue: lines written without blocking */
#ifndef ART_OUTQ_H
#define ART_OUTQ_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

/*
 * A ring of pipes deadlocks when every stage blocks writing while its
 * reader blocks writing too.  A stage that must keep reading (the engine,
 * and the stages that run work in the background) queues its output here
 * and writes what the pipe takes, polling for POLLOUT while anything is
 * left (art_outq_pending() > 0).
 */
struct art_outq;

/*
 * A queue writing to fd.  A pipe, FIFO or socket is made non-blocking;
 * other files are written as they are.  Returns NULL when out of memory.
 */
struct art_outq *art_outq_new(int fd);
void	art_outq_free(struct art_outq *);
int	art_outq_fd(const struct art_outq *);
/*
 * Queues line (consumed) as one compact JSON line and writes what it can
 * at once.  -1 with err code "epipe" when the reader is gone, "io" when
 * the write failed (the line is dropped then: nobody can read it).
 */
int	art_outq_push(struct art_outq *, jv line, struct art_err *);
/* Queues bytes as they are (a line the stage passes on untouched). */
int	art_outq_push_raw(struct art_outq *, const char *, size_t,
	    struct art_err *);
/*
 * Writes what the fd takes now; -1 with err code "io" on failure, "epipe"
 * when the reader is gone (with SIGPIPE ignored).
 */
int	art_outq_flush(struct art_outq *, struct art_err *);
/* Bytes queued and not yet written. */
size_t	art_outq_pending(const struct art_outq *);
/*
 * For a stage with work to finish when its reader is gone (the tool
 * stage, whose running tools' results the outbox keeps): from now on a
 * reader that is gone is no error: what is queued and what is pushed
 * later is dropped, pushes and flushes succeed, and art_outq_gone() says
 * so.
 */
void	art_outq_drop_when_gone(struct art_outq *);
/* Whether the reader went, with art_outq_drop_when_gone() set. */
int	art_outq_gone(const struct art_outq *);

#endif
