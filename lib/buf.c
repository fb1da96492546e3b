/* buf.c - growable bytes, growable arrays, and whole files read into them */
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
art_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void *p, *np;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap > 0 ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	if (size != 0 && ncap > SIZE_MAX / size)
		return -1;
	/* The pointer is read and written as bytes: it may be any object
	 * pointer type, which POSIX gives one representation. */
	memcpy(&p, pp, sizeof(p));
	if ((np = realloc(p, ncap * size)) == NULL)
		return -1;
	memcpy(pp, &np, sizeof(np));
	*cap = ncap;
	return 0;
}

void
art_buf_init(struct art_buf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

int
art_buf_reserve(struct art_buf *b, size_t more)
{
	if (more > SIZE_MAX - b->len - 1)
		return -1;
	if (art_grow(&b->p, &b->cap, b->len + more + 1, 1) == -1)
		return -1;
	b->p[b->len] = '\0';
	return 0;
}

int
art_buf_add(struct art_buf *b, const void *p, size_t n)
{
	if (art_buf_reserve(b, n) == -1)
		return -1;
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int
art_buf_addstr(struct art_buf *b, const char *s)
{
	return art_buf_add(b, s, strlen(s));
}

int
art_buf_addc(struct art_buf *b, char c)
{
	return art_buf_add(b, &c, 1);
}

void
art_buf_consume(struct art_buf *b, size_t n)
{
	if (n >= b->len)
		n = b->len;
	if (n == 0)
		return;
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
	b->p[b->len] = '\0';
}

void
art_buf_clear(struct art_buf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

char *
art_buf_detach(struct art_buf *b, size_t *len)
{
	char *p;

	if (b->p == NULL && art_buf_reserve(b, 0) == -1)
		return NULL;
	p = b->p;
	if (len != NULL)
		*len = b->len;
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

void
art_buf_release(struct art_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int
art_buf_read_fd(struct art_buf *b, int fd, size_t max, const char *what,
    struct art_err *err)
{
	ssize_t n;
	int saved;

	for (;;) {
		if (b->cap - b->len < 4097 && art_buf_reserve(b, b->cap > 4096 ?
		    b->cap : 4096) == -1)
			return art_err_set(err, "nomem", "out of memory reading "
			    "%s", what);
		n = read(fd, b->p + b->len, b->cap - b->len - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			saved = errno;
			art_err_set(err, "io", "%s: %s", what, strerror(errno));
			errno = saved;
			return -1;
		}
		if (n == 0)
			return 0;
		b->len += (size_t)n;
		b->p[b->len] = '\0';
		if (max > 0 && b->len > max)
			return art_err_set(err, "too_big", "%s: larger than "
			    "%zu bytes", what, max);
	}
}

int
art_buf_read_file(struct art_buf *b, const char *path, size_t max,
    struct art_err *err)
{
	int fd, rc, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		saved = errno;
		art_err_set(err, "io", "%s: %s", path, strerror(errno));
		errno = saved;
		return -1;
	}
	rc = art_buf_read_fd(b, fd, max, path, err);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}
