/* outq-test - lines queued to a pipe without blocking, and the pipe's end */
#include "outq.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

/* Reads what the pipe holds now into buf (at most size - 1 bytes). */
static size_t
drain(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

static void
test_lines_in_order(void)
{
	struct art_err err;
	struct art_outq *q;
	char buf[256];
	int p[2];

	if (pipe(p) == -1) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	q = art_outq_new(p[1]);
	ok(q != NULL && art_outq_fd(q) == p[1], "a queue on a pipe");
	ok(art_outq_push(q, jv_parse("{\"type\":\"a\",\"n\":1}"), &err) == 0 &&
	    art_outq_push_raw(q, "{\"raw\": true}\n", 14, &err) == 0 &&
	    art_outq_pending(q) == 0, "a line and raw bytes are written at "
	    "once when the pipe has room");
	drain(p[0], buf, sizeof(buf));
	ok(strcmp(buf, "{\"type\":\"a\",\"n\":1}\n{\"raw\": true}\n") == 0,
	    "as one compact line each, in order");
	art_outq_free(q);
	close(p[0]);
	close(p[1]);
}

static void
test_full_pipe_queues(void)
{
	static char big[1 << 16], got[1 << 20];
	struct art_err err;
	struct art_outq *q;
	size_t want = 0, n = 0, i;
	int p[2], good = 1;

	if (pipe(p) == -1) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	q = art_outq_new(p[1]);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\n';
	for (i = 0; i < 8; i++) {
		big[0] = (char)('0' + i);
		good &= art_outq_push_raw(q, big, sizeof(big), &err) == 0;
		want += sizeof(big);
	}
	ok(good && art_outq_pending(q) > 0, "512 KiB to a pipe nobody reads: "
	    "queued, not blocked (%zu pending)", art_outq_pending(q));
	while (n < want && good) {
		n += drain(p[0], got + n, sizeof(got) - n);
		good &= art_outq_flush(q, &err) == 0;
	}
	n += drain(p[0], got + n, sizeof(got) - n);
	ok(good && n == want && art_outq_pending(q) == 0,
	    "read and flushed in turn, every byte comes (%zu of %zu)", n, want);
	for (i = 0; i < 8 && good; i++)
		good &= got[i * sizeof(big)] == (char)('0' + i);
	ok(good, "the chunks come in the order they were queued");
	art_outq_free(q);
	close(p[0]);
	close(p[1]);
}

static void
test_reader_gone(void)
{
	struct art_err err;
	struct art_outq *q;
	int p[2];

	if (pipe(p) == -1) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	close(p[0]);
	q = art_outq_new(p[1]);
	ok(art_outq_push(q, jv_parse("{\"type\":\"x\"}"), &err) == -1 &&
	    strcmp(err.code, "epipe") == 0, "a pipe whose reader is gone is "
	    "epipe: %s", err.msg);
	ok(!art_outq_gone(q), "without drop_when_gone it is not gone, an error");
	art_outq_drop_when_gone(q);
	ok(art_outq_push(q, jv_parse("{\"type\":\"y\"}"), &err) == 0 &&
	    art_outq_gone(q) && art_outq_pending(q) == 0, "with it, a gone "
	    "reader drops what is queued, and says it is gone");
	ok(art_outq_push(q, jv_parse("{\"type\":\"z\"}"), &err) == 0 &&
	    art_outq_flush(q, &err) == 0 && art_outq_pending(q) == 0,
	    "and what is pushed later, without an error");
	art_outq_free(q);
	close(p[1]);
	art_outq_free(NULL);	/* does nothing, or the test dies here */
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_lines_in_order();
	test_full_pipe_queues();
	test_reader_gone();
	return tap_done();
}
