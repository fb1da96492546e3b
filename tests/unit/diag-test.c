/* diag-test - the program's name and its one-line messages on stderr */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "tap.h"

/* Runs fn in a child with stderr on a pipe; returns what it wrote. */
static int
capture(void (*fn)(void), char *out, size_t n)
{
	int p[2], status;
	ssize_t got;
	size_t len = 0;
	pid_t pid;

	fflush(stdout);
	if (pipe(p) == -1 || (pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		fn();
		_exit(0);
	}
	close(p[1]);
	while (len + 1 < n && (got = read(p[0], out + len, n - 1 - len)) > 0)
		len += (size_t)got;
	out[len] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
warn_twice(void)
{
	art_diag_init("/usr/bin/agentrt-x");
	art_warn("%s:%d: %s", "<stdin>", 12, "line is not valid JSON");
	art_warn("two\nlines");
}

static void
die_three(void)
{
	art_diag_init("agentrt-y");
	art_die(3, "fatal: %s", "gone");
}

static void
test_warn_prefixes_the_name_and_keeps_one_line(void)
{
	char out[512];

	ok(capture(warn_twice, out, sizeof(out)) == 0, "warn returns");
	ok(strcmp(out, "agentrt-x: <stdin>:12: line is not valid JSON\n"
	    "agentrt-x: two\n") == 0, "name without directory, one line "
	    "each");
}

static void
test_die_writes_then_exits_with_the_status(void)
{
	char out[512];

	ok(capture(die_three, out, sizeof(out)) == 3, "exit status 3");
	ok(strcmp(out, "agentrt-y: fatal: gone\n") == 0, "the message");
}

static void
test_name_defaults_and_ignores_empty(void)
{
	ok(strcmp(art_diag_name(), "agentrt") == 0, "default name");
	art_diag_init("");
	art_diag_init(NULL);
	ok(strcmp(art_diag_name(), "agentrt") == 0, "empty names ignored");
}

int
main(void)
{
	test_name_defaults_and_ignores_empty();
	test_warn_prefixes_the_name_and_keeps_one_line();
	test_die_writes_then_exits_with_the_status();
	return tap_done();
}
