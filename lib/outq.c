/* outq.c - the ring's out-queue: lines written without blocking */
#include "outq.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"

struct art_outq {
	int	 fd;
	char	*buf;
	size_t	 start, end, cap;
	int	 drop_when_gone, gone;
};

struct art_outq *
art_outq_new(int fd)
{
	struct art_outq *q;
	struct stat sb;
	int fl;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->fd = fd;
	if (fstat(fd, &sb) == 0 && (S_ISFIFO(sb.st_mode) ||
	    S_ISSOCK(sb.st_mode)) && (fl = fcntl(fd, F_GETFL)) != -1)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	return q;
}

void
art_outq_free(struct art_outq *q)
{
	if (q == NULL)
		return;
	free(q->buf);
	free(q);
}

int
art_outq_fd(const struct art_outq *q)
{
	return q->fd;
}

size_t
art_outq_pending(const struct art_outq *q)
{
	return q->end - q->start;
}

void
art_outq_drop_when_gone(struct art_outq *q)
{
	q->drop_when_gone = 1;
}

int
art_outq_gone(const struct art_outq *q)
{
	return q->gone;
}

int
art_outq_flush(struct art_outq *q, struct art_err *err)
{
	ssize_t n;

	while (!q->gone && q->start < q->end) {
		n = write(q->fd, q->buf + q->start, q->end - q->start);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n == -1 && errno == EPIPE && q->drop_when_gone) {
			q->gone = 1;
			break;
		}
		if (n == -1)
			return art_err_set(err, errno == EPIPE ? "epipe" :
			    "io", "write: %s", strerror(errno));
		q->start += (size_t)n;
	}
	q->start = q->end = 0;
	return 0;
}

static int
append(struct art_outq *q, const char *p, size_t n, struct art_err *err)
{
	size_t live = q->end - q->start;

	if (q->start > 0) {
		memmove(q->buf, q->buf + q->start, live);
		q->start = 0;
		q->end = live;
	}
	/* 64 KiB at first: a pipe's worth, so most queues never grow. */
	if (art_grow(&q->buf, &q->cap, q->end + n < 65536 ? 65536 : q->end + n,
	    1) == -1)
		return art_err_set(err, "nomem", "out of memory");
	memcpy(q->buf + q->end, p, n);
	q->end += n;
	return 0;
}

int
art_outq_push_raw(struct art_outq *q, const char *p, size_t n,
    struct art_err *err)
{
	if (append(q, p, n, err) == -1)
		return -1;
	return art_outq_flush(q, err);
}

int
art_outq_push(struct art_outq *q, jv line, struct art_err *err)
{
	size_t n;
	char *s = art_json_dump(&line, &n);
	int r;

	jv_free(line);
	if (s == NULL)
		return art_err_set(err, "nomem", "out of memory");
	s[n] = '\n';	/* the dump's NUL becomes the line's end */
	r = append(q, s, n + 1, err);
	free(s);
	return r == -1 ? -1 : art_outq_flush(q, err);
}
