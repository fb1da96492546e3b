/* ring-test - rings of real stages: lines go round, teardown reaps all */
#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

/* Each stage's argv: sh -c SCRIPT, or one word. */
static char *argvs[ART_RING_MAX][4];

/* Stage i runs script under sh, or cmd alone when script is NULL. */
static void
stage(struct art_spawn *s, int i, const char *cmd, const char *script)
{
	memset(&s[i], 0, sizeof(s[i]));
	argvs[i][0] = (char *)cmd;
	argvs[i][1] = script != NULL ? "-c" : NULL;
	argvs[i][2] = (char *)script;
	argvs[i][3] = NULL;
	s[i].file = cmd;
	s[i].argv = argvs[i];
}

/* All that fd gives until its end, in buf (NUL-terminated); closes fd. */
static const char *
drain(int fd, char *buf, size_t n)
{
	FILE *f = fdopen(fd, "r");
	size_t len = f != NULL ? fread(buf, 1, n - 1, f) : 0;

	buf[len] = '\0';
	if (f != NULL)
		fclose(f);
	return buf;
}

/* The lowest free descriptor: unchanged when nothing leaked. */
static int
lowest_free(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

static bool
no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

static void
test_lines_go_round(void)
{
	struct art_spawn s[3];
	struct art_ring r;
	struct art_err err;
	char buf[256];
	int out[2], before = lowest_free(), i, live;

	if (art_spawn_pipe(out) == -1) {
		ok(0, "pipe: %s", strerror(errno));
		return;
	}
	stage(s, 0, "sh", "echo ping; read x; echo \"round: $x\" >&2");
	stage(s, 1, "sh", "read x; echo \"a-$x\"");
	stage(s, 2, "cat", NULL);
	for (i = 0; i < 3; i++)
		s[i].io[2] = (struct art_spawn_io){ ART_SPAWN_FD, out[1] };
	ok(art_ring_start(&r, s, 3, false, &err) == 0 && r.n == 3,
	    "a ring of three starts");
	close(out[1]);
	ok(lowest_free() == before + 1, "we hold none of its pipes");
	ok(strcmp(drain(out[0], buf, sizeof(buf)), "round: a-ping\n") == 0,
	    "a line goes all the way round (%s)", buf);
	live = art_ring_reap(&r, true);
	ok(live == 0 && r.pid[0] == 0 && r.pid[1] == 0 && r.pid[2] == 0,
	    "it winds down by itself, every stage reaped");
	ok(WIFEXITED(r.status[0]) && WEXITSTATUS(r.status[0]) == 0 &&
	    WIFEXITED(r.status[2]) && WEXITSTATUS(r.status[2]) == 0,
	    "with their statuses");
	ok(r.pgid == 0 && no_children(), "in our group; no child is left");
}

static void
test_one_stage_reads_itself(void)
{
	struct art_spawn s[1];
	struct art_ring r;
	struct art_err err;

	stage(s, 0, "sh", "echo 7; read x; exit $x");
	ok(art_ring_start(&r, s, 1, false, &err) == 0 &&
	    art_ring_reap(&r, true) == 0 && WIFEXITED(r.status[0]) &&
	    WEXITSTATUS(r.status[0]) == 7, "a ring of one reads its own line");
}

static void
test_teardown_reaps_all(void)
{
	struct art_spawn s[3];
	struct art_ring r;
	struct art_err err;
	int i, killed = 0;

	for (i = 0; i < 3; i++)
		stage(s, i, "cat", NULL);	/* waits for ever: no line */
	ok(art_ring_start(&r, s, 3, true, &err) == 0 && r.pgid == r.pid[0],
	    "group: the first stage leads it");
	ok(getpgid(r.pid[1]) == r.pgid && getpgid(r.pid[2]) == r.pgid,
	    "and the others join it");
	ok(art_ring_reap(&r, false) == 3, "reap: all three still run");
	art_ring_release(&r);
	for (i = 0; i < 3; i++)
		killed += r.pid[i] == 0 && WIFSIGNALED(r.status[i]) &&
		    WTERMSIG(r.status[i]) == SIGKILL;
	ok(killed == 3 && no_children(), "release kills and reaps them all");
	art_ring_release(&r);
	ok(1, "and a second release is harmless");

	/* Stages that read nothing: a cat could end on the EOF its
	 * neighbour's death leaves before the signal reaches it. */
	for (i = 0; i < 3; i++)
		stage(s, i, "sh", "exec sleep 30");
	art_ring_start(&r, s, 3, false, &err);
	art_ring_signal(&r, SIGTERM);
	ok(art_ring_reap(&r, true) == 0, "the signalled ring ends");
	for (i = 0, killed = 0; i < 3; i++)
		killed += WIFSIGNALED(r.status[i]) &&
		    WTERMSIG(r.status[i]) == SIGTERM;
	ok(killed == 3, "signal reaches each stage (%d of 3)", killed);
}

static void
test_a_stage_that_cannot_start(void)
{
	struct art_spawn s[3];
	struct art_ring r;
	struct art_err err;
	int before = lowest_free();

	stage(s, 0, "cat", NULL);
	stage(s, 1, "/nonexistent/stage", NULL);
	stage(s, 2, "cat", NULL);
	ok(art_ring_start(&r, s, 3, true, &err) == -1 &&
	    art_err_is(&err, "spawn_exec") && strcmp(err.msg,
	    "run /nonexistent/stage: No such file or directory") == 0,
	    "a stage that cannot run fails the ring (%s)", err.msg);
	ok(r.pid[0] == 0 && r.pid[2] == 0 && no_children(),
	    "the stage already started is stopped and reaped");
	ok(lowest_free() == before, "and no pipe is left open");
	ok(art_ring_start(&r, s, 0, false, &err) == -1 &&
	    art_ring_start(&r, s, ART_RING_MAX + 1, false, &err) == -1,
	    "0 stages, or too many, is refused");
}

int
main(void)
{
	alarm(60);	/* a ring that hangs fails the test, not the run */
	test_lines_go_round();
	test_one_stage_reads_itself();
	test_teardown_reaps_all();
	test_a_stage_that_cannot_start();
	return tap_done();
}
