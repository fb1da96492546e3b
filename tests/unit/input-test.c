/* input-test - named files in turn, stdin, failures named, pipes waited on */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "testdir.h"

/* Writes text to the scratch directory's name; returns the path (a copy). */
static char *
put(const char *name, const char *text)
{
	char *path = strdup(test_dir_put(name, text, 0644));

	if (path == NULL)
		test_dir_bail("strdup");
	return path;
}

/*
 * Reads the current file to its end: its lines' "type"s joined by ' ',
 * each followed by ":lineno"; a bad line is "!code:lineno".  *rc is the
 * last art_input_read().  Not waiting, it reads once at most.
 */
static char *
read_all(struct art_input *in, bool wait, int *rc, struct art_err *err)
{
	static char got[1024];
	struct art_ndjson_reader *rd = art_input_reader(in);
	enum art_ndjson_status st;
	size_t n = 0;
	int reads = 0;
	jv v;

	got[0] = '\0';
	*rc = 1;
	while ((st = art_ndjson_next(rd, &v, err)) != ART_NDJSON_EOF) {
		if (st == ART_NDJSON_AGAIN) {
			/* The end, yet no EOF; or not waiting: read once. */
			if (*rc <= 0 || (!wait && reads++ > 0))
				break;
			*rc = art_input_read(in, wait, err);
			continue;
		}
		if (st == ART_NDJSON_OK) {
			jv t = jv_object_get(v, jv_string("type"));

			n += (size_t)snprintf(got + n, sizeof(got) - n,
			    "%s%s:%zu", n > 0 ? " " : "", jv_string_value(t),
			    art_ndjson_lineno(rd));
			jv_free(t);
		} else
			n += (size_t)snprintf(got + n, sizeof(got) - n,
			    "%s!%s:%zu", n > 0 ? " " : "", err->code,
			    art_ndjson_lineno(rd));
	}
	return got;
}

static void
test_files_are_read_in_turn_each_numbered_from_one(void)
{
	char *a = put("a", "{\"type\":\"a1\"}\n{\"type\":\"a2\"}\n");
	char *b = put("b", "nope\n{\"type\":\"b2\"}");
	char *files[] = { a, b, NULL };
	struct art_input *in = art_input_new(files, 0,
	    ART_NDJSON_REQUIRE_TYPE, "open");
	struct art_err err;
	int rc;

	ok(art_input_fd(in) == -1 && art_input_reader(in) == NULL &&
	    strcmp(art_input_name(in), "") == 0, "nothing is open at first");
	ok(art_input_open(in, &err) == 1 && strcmp(art_input_name(in), a) == 0
	    && (fcntl(art_input_fd(in), F_GETFD) & FD_CLOEXEC),
	    "the first file is opened, close-on-exec, and named by its path");
	ok(strcmp(read_all(in, true, &rc, &err), "a1:1 a2:2") == 0 && rc == 0,
	    "its lines, then its end");
	ok(art_input_open(in, &err) == 1 && strcmp(art_input_name(in), b) == 0,
	    "then the second");
	ok(strcmp(read_all(in, true, &rc, &err), "!bad_json:1 b2:2") == 0,
	    "numbered from 1 again, its bad line reported, its last line "
	    "taken without a newline");
	ok(art_input_open(in, &err) == 0 && art_input_fd(in) == -1 &&
	    !art_input_failed(in), "then the end, nothing failed");
	art_input_free(in);
	free(a);
	free(b);
}

static void
test_a_missing_file_is_named_and_the_next_is_read(void)
{
	char *a = put("here", "{\"type\":\"x\"}\n"), missing[300];
	char *files[] = { missing, a, NULL };
	struct art_input *in;
	struct art_err err;
	char want[400];
	int rc;

	snprintf(missing, sizeof(missing), "%s", test_dir_path("missing"));
	snprintf(want, sizeof(want), "open '%s': No such file or directory",
	    missing);
	in = art_input_new(files, 0, 0, "open");
	ok(art_input_open(in, &err) == -1 && art_err_is(&err, "open") &&
	    strcmp(err.msg, want) == 0 && art_input_failed(in),
	    "a missing file: \"open 'PATH': why\", and the input has failed");
	ok(art_input_open(in, &err) == 1 && strcmp(art_input_name(in), a) == 0
	    && strcmp(read_all(in, false, &rc, &err), "x:1") == 0,
	    "the next file is read all the same");
	art_input_free(in);

	in = art_input_new(files, 0, 0, "read");
	snprintf(want, sizeof(want), "read '%s': No such file or directory",
	    missing);
	ok(art_input_open(in, &err) == -1 && strcmp(err.msg, want) == 0,
	    "the verb is the command's");
	art_input_free(in);
	free(a);
}

static void
test_a_read_error_is_named_and_ends_the_file(void)
{
	char *files[] = { test_dir, NULL };
	struct art_input *in = art_input_new(files, 0, 0, "open");
	struct art_err err;
	char want[300];
	int rc;

	snprintf(want, sizeof(want), "read %s: Is a directory", test_dir);
	ok(art_input_open(in, &err) == 1 && art_input_read(in, true, &err) ==
	    -1 && art_err_is(&err, "io") && strcmp(err.msg, want) == 0 &&
	    art_input_failed(in), "a directory: \"read NAME: why\", failed");
	ok(strcmp(read_all(in, true, &rc, &err), "") == 0,
	    "and its reader has been told the end");
	ok(art_input_open(in, &err) == 0, "then the end");
	art_input_free(in);
}

/*
 * Standard input, a non-blocking pipe here: with wait false a read finds
 * nothing and the poll loop goes on; with wait true it waits for bytes.
 */
static void
test_stdin_alone_by_default_and_a_pipe_waited_on(void)
{
	struct art_input *in = art_input_new(NULL, 0, 0, "open");
	int data[2], go[2], saved = dup(STDIN_FILENO), rc;
	struct art_err err;
	char c;
	pid_t pid;

	if (pipe(data) == -1 || pipe(go) == -1 || saved == -1)
		test_dir_bail("pipe");
	if ((pid = fork()) == 0) {
		close(data[0]);
		close(go[1]);
		(void)!write(data[1], "{\"type\":\"early\"}\n{\"type\":", 25);
		(void)!read(go[0], &c, 1);
		(void)!write(data[1], "\"late\"}\n", 8);
		_exit(0);
	}
	close(data[1]);
	close(go[0]);
	dup2(data[0], STDIN_FILENO);
	close(data[0]);
	fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) |
	    O_NONBLOCK);
	ok(art_input_open(in, &err) == 1 && art_input_fd(in) == STDIN_FILENO
	    && strcmp(art_input_name(in), "<stdin>") == 0,
	    "no files named: the standard input, named <stdin>");
	ok(art_input_read(in, true, &err) == 1 &&
	    art_input_read(in, false, &err) == 1, "a read that waits gets "
	    "the first bytes; with nothing more to read, one that does not "
	    "wait is done at once");
	ok(strcmp(read_all(in, false, &rc, &err), "early:1") == 0 && rc == 1,
	    "the whole line came, the piece waits for the rest");
	(void)!write(go[1], "", 1);
	close(go[1]);
	ok(strcmp(read_all(in, true, &rc, &err), "late:2") == 0 && rc == 0,
	    "a read that waits gets the rest, then the end");
	ok(art_input_open(in, &err) == 0 && fcntl(STDIN_FILENO, F_GETFD) != -1,
	    "the standard input is never closed");
	waitpid(pid, NULL, 0);
	art_input_free(in);
	dup2(saved, STDIN_FILENO);
	close(saved);
}

static int
only_b(const char *type, const char *trigger, void *ctx)
{
	(void)trigger, (void)ctx;
	return strcmp(type, "b") == 0;
}

static void
test_every_file_gets_the_filter(void)
{
	char *a = put("fa", "{\"type\":\"a\"}\n{\"type\":\"b\"}\n");
	char *files[] = { a, a, NULL };
	struct art_input *in = art_input_new(files, 0, 0, "open");
	struct art_err err;
	int n, i, raw = 0;
	jv v;

	art_input_set_filter(in, only_b, NULL);
	for (n = 0; art_input_open(in, &err) == 1; n++) {
		while (art_input_read(in, true, &err) == 1)
			;
		for (i = 0; i < 3; i++)
			switch (art_ndjson_next(art_input_reader(in), &v,
			    &err)) {
			case ART_NDJSON_RAW: raw++; break;
			case ART_NDJSON_OK: jv_free(v); break;
			default: break;
			}
	}
	ok(n == 2 && raw == 2, "each file's unwanted line passes by raw");
	art_input_free(in);
	free(a);
}

int
main(void)
{
	test_dir_make("input-test");
	test_files_are_read_in_turn_each_numbered_from_one();
	test_a_missing_file_is_named_and_the_next_is_read();
	test_a_read_error_is_named_and_ends_the_file();
	test_stdin_alone_by_default_and_a_pipe_waited_on();
	test_every_file_gets_the_filter();
	test_dir_remove();
	return tap_done();
}
