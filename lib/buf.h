/* buf.h - growable bytes, growable arrays, and whole files read into them */
#ifndef ART_BUF_H
#define ART_BUF_H

#include <stddef.h>

#include "err.h"

/*
 * A struct art_buf owns p, which holds len bytes and, once anything has
 * been added, a NUL after them (so p can be read as a C string when the
 * bytes hold none).  cap is what p has room for.  It is embedded:
 * art_buf_init() (or ART_BUF_INIT, or zeroed memory) makes it empty,
 * owning nothing, and art_buf_release() frees what it holds, leaving it
 * empty again.  It doubles as it grows, so adding n bytes one at a time
 * costs O(n).
 * Out of memory leaves the buffer as it was and returns -1; the caller
 * says so (err code "nomem") where it has a struct art_err to fill.
 */
struct art_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

#define ART_BUF_INIT	{ NULL, 0, 0 }

void	art_buf_init(struct art_buf *);

/* Room for more bytes after len (and the NUL): 0, or -1 when out of memory. */
int	art_buf_reserve(struct art_buf *, size_t more);
/* Appends n bytes of p (p may be NULL when n is 0): 0, or -1. */
int	art_buf_add(struct art_buf *, const void *p, size_t n);
int	art_buf_addstr(struct art_buf *, const char *s);
int	art_buf_addc(struct art_buf *, char c);
/* Drops the first n bytes (all of them when n >= len), keeping the room. */
void	art_buf_consume(struct art_buf *, size_t n);
/* Empties the buffer, keeping the room. */
void	art_buf_clear(struct art_buf *);
/*
 * Hands the bytes to the caller (free(3) them), NUL-terminated, with their
 * length in *len when len is not NULL; the buffer is then empty and owns
 * nothing.  NULL only when out of memory (an empty buffer gives "").
 */
char	*art_buf_detach(struct art_buf *, size_t *len);
void	art_buf_release(struct art_buf *);

/*
 * Appends everything fd gives until end of file, reading past EINTR.
 * More than max bytes in all (0: no limit) is err code "too_big"; a read
 * error is "io" naming what (what: the file's name, for the message),
 * with errno kept from read(2).  On error the bytes read so far stay in
 * the buffer.
 */
int	art_buf_read_fd(struct art_buf *, int fd, size_t max, const char *what,
	    struct art_err *);
/*
 * A whole file into an empty buffer: art_buf_read_fd on path.  A file
 * that cannot be opened is err code "io" (errno tells why: ENOENT for a
 * missing one) with a message naming path.
 */
int	art_buf_read_file(struct art_buf *, const char *path, size_t max,
	    struct art_err *);

/*
 * Grows an array of elements of size bytes, whose pointer (of any object
 * type) is at pp, with room for *cap of them, to hold at least need:
 * doubling (from 8), so pushing n elements one at a time costs O(n).  0
 * with the pointer and *cap updated, or -1 when out of memory (or need *
 * size overflows), the array untouched.
 *
 *	if (art_grow(&v, &cap, n + 1, sizeof(*v)) == -1) ...
 *	v[n++] = x;
 */
int	art_grow(void *pp, size_t *cap, size_t need, size_t size);

#endif
