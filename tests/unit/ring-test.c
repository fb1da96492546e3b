/* ring-test - rings of real stages: lines go round, teardown reaps all;
 * the standard ring's command lines and where its binaries are */
#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "testdir.h"

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
	for (i = 0, killed = 0; i < 3; i++)
		killed += r.pid[i] == 0 && WIFSIGNALED(r.status[i]) &&
		    WTERMSIG(r.status[i]) == SIGKILL;
	ok(killed == 3 && no_children(), "and a second release changes "
	    "nothing: no pid to signal, the statuses kept");

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

/* argv joined by spaces, in a buffer the next call reuses. */
static const char *
joined(const struct art_strvec *a)
{
	static char buf[8192];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < a->n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
		    i > 0 ? " " : "", a->v[i]);
	return a->v[a->n] == NULL ? buf : "(no NULL after the argv)";
}

static void
test_bindir(const char *argv0)
{
	char dir[PATH_MAX], copy[PATH_MAX], tiny[4], buf[64];
	char path[PATH_MAX + 16];
	struct stat got, want;

	snprintf(copy, sizeof(copy), "%s", argv0);
	ok(art_ring_bindir(dir, sizeof(dir)) == 0 && dir[0] == '/' &&
	    stat(dir, &got) == 0 && stat(dirname(copy), &want) == 0 &&
	    got.st_dev == want.st_dev && got.st_ino == want.st_ino,
	    "our binary's directory is where we were run from (%s)", dir);
	ok(strcmp(art_ring_sibling(dir, "ring-test", path, sizeof(path)),
	    path) == 0 && strcmp(path + strlen(dir), "/ring-test") == 0,
	    "a sibling that is there is run from there");
	ok(strcmp(art_ring_sibling(dir, "no-such-sibling", path,
	    sizeof(path)), "no-such-sibling") == 0,
	    "one that is not is looked up in PATH");
	ok(strcmp(art_ring_sibling(dir, ".", path, sizeof(path)), ".") == 0,
	    "so is a directory by its name");
	ok(strcmp(art_ring_sibling(NULL, "ring-test", path, sizeof(path)),
	    "ring-test") == 0 && strcmp(art_ring_sibling("", "ring-test",
	    path, sizeof(path)), "ring-test") == 0,
	    "no directory: PATH");
	ok(strcmp(art_ring_sibling(dir, "ring-test", buf, 2), "ring-test") ==
	    0, "a path that does not fit is not cut short: PATH");
	ok(art_ring_bindir(tiny, sizeof(tiny)) == -1 && tiny[0] == '\0',
	    "a directory that does not fit is -1 and \"\"");
}

/* agentrt-serve's ring: one session stage serving every run. */
static void
test_cmd_serve(void)
{
	const char *tools[] = { "/t1", "/t2" }, *agents[] = { "/a1" };
	struct art_ring_opts o = {
		.tool_dirs = tools, .ntool_dirs = 2,
		.db = "/db", .verb = "serve",
		.agent_dirs = agents, .nagent_dirs = 1,
		.events = "/dev/fd/5", .events_format = "ndjson",
		.clients = "/dev/fd/6",
	};
	struct art_ring_cmd cmd = ART_RING_CMD_INIT;
	struct art_spawn s[ART_RING_STAGES];
	struct art_err err;

	if (!ok(art_ring_cmd_make(&cmd, &o, &err) == 0, "serve's ring made"))
		return;
	ok(strcmp(joined(&cmd.argv[0]), "agentrt-decide") == 0 &&
	    strcmp(joined(&cmd.argv[1]), "agentrt-llm") == 0,
	    "decide and llm take nothing");
	ok(strcmp(joined(&cmd.argv[2]), "agentrt-tool --tools /t1 --tools "
	    "/t2") == 0, "tool takes every tools directory (%s)",
	    joined(&cmd.argv[2]));
	ok(strcmp(joined(&cmd.argv[3]), "agentrt-session -d /db serve "
	    "--agents /a1 --tools /t1 --events /dev/fd/5 --events-format "
	    "ndjson --clients /dev/fd/6") == 0,
	    "the session serves, the first tools directory its own (%s)",
	    joined(&cmd.argv[3]));
	ok(strcmp(cmd.file[0], "agentrt-decide") == 0 &&
	    strcmp(cmd.file[3], "agentrt-session") == 0,
	    "no bindir: each stage is looked up in PATH");
	art_ring_cmd_spawn(&cmd, s);
	ok(s[1].file == cmd.file[1] && s[1].argv == cmd.argv[1].v &&
	    strcmp(s[1].name, "agentrt-llm") == 0 && s[1].keep == NULL &&
	    s[1].io[2].how == ART_SPAWN_INHERIT,
	    "the spawns run them, named by the binary, nothing else set");
	art_ring_cmd_release(&cmd);
	ok(cmd.argv[0].v == NULL && cmd.file[0] == NULL,
	    "release frees it all");
}

/* agentrt-shell's ring for one turn, a bindir holding one sibling. */
static void
test_cmd_shell(void)
{
	const char *tools[] = { "/t" }, *mcps[] = { "fs=mcp-fs" },
	    *envs[] = { "HOME" }, *agents[] = { "/sys", "/a" };
	struct art_ring_opts o = {
		.decide_jq = ".", .decide_exec = "w", .decide_url = "http://u",
		.model = "mock", .llm_record = "c.ndjson",
		.tool_dirs = tools, .ntool_dirs = 1, .mcps = mcps, .nmcps = 1,
		.tool_envs = envs, .ntool_envs = 1,
		.agent = "helper", .agent_dirs = agents, .nagent_dirs = 2,
		.events = "/dev/fd/9", .message = "hi there", .verbose = true,
	};
	struct art_ring_cmd cmd = ART_RING_CMD_INIT;
	struct art_err err;
	char llm[512];

	test_dir_make("ring-test");
	test_dir_put("agentrt-llm", "#!/bin/sh\n", 0755);
	test_dir_put("agentrt-tool", "not run\n", 0644);
	o.bindir = test_dir;
	if (!ok(art_ring_cmd_make(&cmd, &o, &err) == 0, "shell's ring made"))
		goto out;
	ok(strcmp(joined(&cmd.argv[0]), "agentrt-decide --jq . --exec w "
	    "--url http://u") == 0, "decide's workers (%s)",
	    joined(&cmd.argv[0]));
	ok(strcmp(joined(&cmd.argv[1]), "agentrt-llm -m mock --record "
	    "c.ndjson") == 0, "llm's model and cassette");
	ok(strcmp(joined(&cmd.argv[2]), "agentrt-tool --tools /t --mcp "
	    "fs=mcp-fs --env HOME") == 0, "tool's directories, servers, "
	    "environment (%s)", joined(&cmd.argv[2]));
	ok(strcmp(joined(&cmd.argv[3]), "agentrt-session run -v -a helper "
	    "--agents /sys --agents /a --tools /t --events /dev/fd/9 -m hi "
	    "there") == 0 && cmd.argv[3].n == 15, "the session runs one "
	    "turn, saying its id, the message one argument (%s)",
	    joined(&cmd.argv[3]));
	snprintf(llm, sizeof(llm), "%s/agentrt-llm", test_dir);
	ok(strcmp(cmd.file[1], llm) == 0 && strcmp(cmd.file[2],
	    "agentrt-tool") == 0 && strcmp(cmd.file[0], "agentrt-decide") ==
	    0, "a sibling in bindir runs from there; one not there, or not "
	    "executable, from PATH");
	art_ring_cmd_release(&cmd);
out:
	test_dir_remove();
}

/* session replay's ring: recordings in, a session resumed. */
static void
test_cmd_replay(void)
{
	const char *agents[] = { "/a", "/scratch/agents" };
	struct art_ring_opts o = {
		.policy = "p.jq", .llm_replay = "/s/models.ndjson",
		.tool_replay = "/s/tools.ndjson", .db = "/db", .sid = "S1",
		.agent_dirs = agents, .nagent_dirs = 2,
		.resume = "i-1", .payload = "{\"ok\":true}",
	};
	struct art_ring_cmd cmd = ART_RING_CMD_INIT;
	struct art_err err;

	if (!ok(art_ring_cmd_make(&cmd, &o, &err) == 0, "replay's ring made"))
		return;
	ok(strcmp(joined(&cmd.argv[0]), "agentrt-decide -f p.jq") == 0 &&
	    strcmp(joined(&cmd.argv[1]), "agentrt-llm --replay "
	    "/s/models.ndjson") == 0 && strcmp(joined(&cmd.argv[2]),
	    "agentrt-tool --replay /s/tools.ndjson") == 0,
	    "decide's policy, llm's cassette, tool's tape");
	ok(strcmp(joined(&cmd.argv[3]), "agentrt-session -d /db run -s S1 "
	    "--agents /a --agents /scratch/agents --resume i-1 --payload "
	    "{\"ok\":true}") == 0, "the session resumes, with no --tools "
	    "(%s)", joined(&cmd.argv[3]));
	art_ring_cmd_release(&cmd);
}

/* Past every old store: 30, 48 and 112 arguments a stage. */
static void
test_cmd_many(void)
{
	const char *dirs[100];
	char names[100][16];
	struct art_ring_opts o = { .verb = "run" };
	struct art_ring_cmd cmd = ART_RING_CMD_INIT;
	struct art_err err;
	int i, good = 1;

	for (i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "/d%d", i);
		dirs[i] = names[i];
	}
	o.tool_dirs = dirs, o.ntool_dirs = 100;
	o.agent_dirs = dirs, o.nagent_dirs = 100;
	if (!ok(art_ring_cmd_make(&cmd, &o, &err) == 0, "100 of each made"))
		return;
	ok(cmd.argv[2].n == 201 && cmd.argv[2].v[201] == NULL,
	    "tool gets all 100 directories (%zu arguments)", cmd.argv[2].n);
	for (i = 0; i < 100 && good; i++)
		good = strcmp(cmd.argv[2].v[2 + 2 * i], names[i]) == 0 &&
		    strcmp(cmd.argv[3].v[3 + 2 * i], names[i]) == 0;
	ok(good && cmd.argv[3].n == 2 + 200 + 2 &&
	    strcmp(cmd.argv[3].v[203], "/d0") == 0,
	    "and the session all 100 agent directories, in order");
	art_ring_cmd_release(&cmd);
}

int
main(int argc, char **argv)
{
	(void)argc;
	alarm(60);	/* a ring that hangs fails the test, not the run */
	test_lines_go_round();
	test_one_stage_reads_itself();
	test_teardown_reaps_all();
	test_a_stage_that_cannot_start();
	test_bindir(argv[0]);
	test_cmd_serve();
	test_cmd_shell();
	test_cmd_replay();
	test_cmd_many();
	return tap_done();
}
