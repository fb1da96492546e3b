/* buf-test - growable bytes and arrays, and files read whole */
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static void
test_add_and_nul(void)
{
	struct art_buf b = ART_BUF_INIT;
	size_t i, len;
	char *p;
	int good = 1;

	ok(art_buf_add(&b, NULL, 0) == 0 && b.len == 0 && b.p != NULL &&
	    b.p[0] == '\0', "adding nothing gives an empty C string");
	for (i = 0; i < 100000; i++)
		good &= art_buf_addc(&b, (char)('a' + i % 26)) == 0;
	ok(good && b.len == 100000 && b.p[b.len] == '\0' && b.cap > b.len,
	    "100000 bytes one at a time, NUL after them");
	ok(b.cap < 2 * 100000 + 2, "room at most doubles what is held "
	    "(cap %zu)", b.cap);
	ok(b.p[0] == 'a' && b.p[25] == 'z' && b.p[26] == 'a',
	    "the bytes are kept in order");
	art_buf_clear(&b);
	ok(b.len == 0 && b.p[0] == '\0' && b.cap > 0, "clear keeps the room");
	ok(art_buf_addstr(&b, "hello, ") == 0 &&
	    art_buf_add(&b, "world\0!", 7) == 0 && b.len == 14 &&
	    memcmp(b.p, "hello, world\0!", 15) == 0,
	    "bytes with a NUL inside are kept, with a NUL after");
	art_buf_consume(&b, 7);
	ok(b.len == 7 && memcmp(b.p, "world\0!", 8) == 0,
	    "consume drops bytes from the front");
	art_buf_consume(&b, 100);
	ok(b.len == 0 && b.p[0] == '\0', "consuming past the end empties it");
	art_buf_addstr(&b, "kept");
	p = art_buf_detach(&b, &len);
	ok(p != NULL && strcmp(p, "kept") == 0 && len == 4 && b.p == NULL &&
	    b.len == 0 && b.cap == 0, "detach hands the bytes over, empty after");
	free(p);
	p = art_buf_detach(&b, NULL);
	ok(p != NULL && *p == '\0', "detaching an empty buffer gives \"\"");
	free(p);
	ok(art_buf_reserve(&b, SIZE_MAX - 1) == -1 && b.p == NULL,
	    "a size that cannot be held fails and changes nothing");
	art_buf_release(&b);
	art_buf_release(&b);
	ok(b.p == NULL, "release twice is harmless");
	art_buf_init(&b);
	ok(b.p == NULL && b.len == 0 && b.cap == 0 &&
	    art_buf_addstr(&b, "x") == 0 && strcmp(b.p, "x") == 0,
	    "init makes an empty buffer that takes bytes");
	art_buf_release(&b);
}

static void
test_grow(void)
{
	int *v = NULL;
	size_t cap = 0, n, good = 1;

	for (n = 0; n < 1000; n++) {
		if (art_grow(&v, &cap, n + 1, sizeof(*v)) == -1) {
			good = 0;
			break;
		}
		v[n] = (int)n;
	}
	ok(good && cap >= 1000 && cap < 2048 && v[999] == 999 && v[0] == 0,
	    "an array grows to hold 1000, doubling (cap %zu)", cap);
	ok(art_grow(&v, &cap, 10, sizeof(*v)) == 0 && cap >= 1000,
	    "asking for less than it holds changes nothing");
	ok(art_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v)) == -1 && v[999] == 999,
	    "an overflowing size fails, the array untouched");
	free(v);
}

static void
test_read(void)
{
	char dir[] = "/tmp/buf-test.XXXXXX", path[64], big[10000];
	struct art_buf b = ART_BUF_INIT;
	struct art_err err;
	int fd, p[2];

	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	memset(big, 'x', sizeof(big));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ok(fd != -1 && write(fd, big, sizeof(big)) == (ssize_t)sizeof(big),
	    "a 10000-byte file is written");
	close(fd);
	ok(art_buf_read_file(&b, path, 0, &err) == 0 && b.len == sizeof(big) &&
	    memcmp(b.p, big, sizeof(big)) == 0 && b.p[b.len] == '\0',
	    "the whole file is read, NUL-terminated");
	art_buf_release(&b);
	ok(art_buf_read_file(&b, path, 4096, &err) == -1 &&
	    strcmp(err.code, "too_big") == 0 && strstr(err.msg, path) != NULL,
	    "a file past the limit is too_big, naming it: %s", err.msg);
	art_buf_release(&b);
	snprintf(path, sizeof(path), "%s/missing", dir);
	ok(art_buf_read_file(&b, path, 0, &err) == -1 && errno == ENOENT &&
	    strcmp(err.code, "io") == 0 && strstr(err.msg, "missing") != NULL,
	    "a missing file is io with errno ENOENT: %s", err.msg);
	ok(art_buf_read_file(&b, dir, 0, &err) == -1 &&
	    strcmp(err.code, "io") == 0, "a directory is io: %s", err.msg);
	art_buf_release(&b);
	if (pipe(p) == 0) {
		ok(write(p[1], "abc", 3) == 3, "a pipe is written");
		close(p[1]);
		art_buf_addstr(&b, ">");
		ok(art_buf_read_fd(&b, p[0], 0, "pipe", &err) == 0 &&
		    strcmp(b.p, ">abc") == 0, "a pipe is read to its end, after "
		    "what the buffer held");
		close(p[0]);
	}
	art_buf_release(&b);
	snprintf(path, sizeof(path), "%s/f", dir);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	test_add_and_nul();
	test_grow();
	test_read();
	return tap_done();
}
