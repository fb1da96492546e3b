/* input.c - a filter's input: the named files in turn, else stdin */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK	65536

struct art_input {
	char *const		 *files;	/* what is left to open */
	size_t			  max_line;
	unsigned		  flags;
	const char		 *verb;
	art_ndjson_want_fn	 *want;
	void			 *want_ctx;
	int			  fd;		/* the current file; -1 */
	bool			  is_stdin;	/* fd is ours to leave open */
	const char		 *name;
	struct art_ndjson_reader *rd;
	bool			  failed;
};

static char *const stdin_only[] = { "-", NULL };

struct art_input *
art_input_new(char *const *files, size_t max_line, unsigned flags,
    const char *verb)
{
	struct art_input *in;

	if ((in = calloc(1, sizeof(*in))) == NULL)
		return NULL;
	in->files = files != NULL && files[0] != NULL ? files : stdin_only;
	in->max_line = max_line;
	in->flags = flags;
	in->verb = verb;
	in->fd = -1;
	in->name = "";
	return in;
}

static void
close_current(struct art_input *in)
{
	if (in->fd != -1 && !in->is_stdin)
		close(in->fd);
	in->fd = -1;
	in->name = "";
	art_ndjson_reader_free(in->rd);
	in->rd = NULL;
}

void
art_input_free(struct art_input *in)
{
	if (in == NULL)
		return;
	close_current(in);
	free(in);
}

void
art_input_set_filter(struct art_input *in, art_ndjson_want_fn *want,
    void *ctx)
{
	in->want = want;
	in->want_ctx = ctx;
	if (in->rd != NULL)
		art_ndjson_set_filter(in->rd, want, ctx);
}

int
art_input_open(struct art_input *in, struct art_err *err)
{
	const char *f;
	bool is_stdin;
	int fd;

	close_current(in);
	if ((f = *in->files) == NULL)
		return 0;
	in->files++;
	if ((is_stdin = strcmp(f, "-") == 0)) {
		fd = STDIN_FILENO;
		f = "<stdin>";
	} else if ((fd = open(f, O_RDONLY | O_CLOEXEC)) == -1) {
		in->failed = true;
		return art_err_set(err, "open", "%s '%s': %s", in->verb, f,
		    strerror(errno));
	}
	/* f outlives the reader: it is argv's, or a literal. */
	if ((in->rd = art_ndjson_reader_new(-1, f, in->max_line,
	    in->flags)) == NULL) {
		if (!is_stdin)
			close(fd);
		return art_err_set(err, "nomem", "out of memory");
	}
	if (in->want != NULL)
		art_ndjson_set_filter(in->rd, in->want, in->want_ctx);
	in->fd = fd;
	in->is_stdin = is_stdin;
	in->name = f;
	return 1;
}

/* Waits until fd has something to read (or has ended). */
static void
wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, -1) == -1 && errno == EINTR)
		;
}

int
art_input_read(struct art_input *in, bool wait, struct art_err *err)
{
	char buf[READ_CHUNK];
	ssize_t n;

	for (;;) {
		if ((n = read(in->fd, buf, sizeof(buf))) > 0)
			return art_ndjson_feed(in->rd, buf, (size_t)n, err) ==
			    -1 ? -1 : 1;
		if (n == 0)
			break;
		if (errno != EINTR && errno != EAGAIN &&
		    errno != EWOULDBLOCK) {
			in->failed = true;
			art_err_set(err, "io", "read %s: %s", in->name,
			    strerror(errno));
			art_ndjson_feed_eof(in->rd);
			return -1;
		}
		if (!wait)
			return 1;
		if (errno != EINTR)
			wait_readable(in->fd);
	}
	art_ndjson_feed_eof(in->rd);
	return 0;
}

int
art_input_fd(const struct art_input *in)
{
	return in->fd;
}

struct art_ndjson_reader *
art_input_reader(const struct art_input *in)
{
	return in->rd;
}

const char *
art_input_name(const struct art_input *in)
{
	return in->name;
}

bool
art_input_failed(const struct art_input *in)
{
	return in->failed;
}
