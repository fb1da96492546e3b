/* spawn-test - starting real children: streams, failures, signals, groups */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

static char tmp[256];

/* A spawn of /bin/sh -c script, its argv in argv (4 of room). */
static struct art_spawn
sh(const char *script, char **argv)
{
	struct art_spawn s = { .file = "/bin/sh", .argv = argv };

	argv[0] = "sh", argv[1] = "-c", argv[2] = (char *)script;
	argv[3] = NULL;
	return s;
}

/* Reads fd to its end into buf (NUL-terminated); closes fd. */
static const char *
slurp(int fd, char *buf, size_t n)
{
	size_t len = 0;
	ssize_t r;

	while (len + 1 < n && ((r = read(fd, buf + len, n - len - 1)) > 0 ||
	    (r == -1 && errno == EINTR)))
		if (r > 0)
			len += (size_t)r;
	buf[len] = '\0';
	close(fd);
	return buf;
}

/* Runs script with stdout piped back; its output, and its wait status. */
static const char *
output_of(struct art_spawn *s, char *buf, size_t n, int *st)
{
	struct art_child ch;
	struct art_err err;

	s->io[1].how = ART_SPAWN_PIPE;
	if (art_spawn(s, &ch, &err) == -1) {
		snprintf(buf, n, "(spawn failed: %.100s)", err.msg);
		*st = -1;
		return buf;
	}
	slurp(ch.fd[1], buf, n);
	*st = art_spawn_wait(ch.pid);
	return buf;
}

static int
exit_code(int st)
{
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
killed_by(int st)
{
	return st != -1 && WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void
test_exit_status_and_pipes(void)
{
	char *argv[4], buf[256];
	struct art_spawn s = sh("read x; echo \"out $x\"; echo \"err $x\" >&2; "
	    "exit 3", argv);
	struct art_child ch;
	struct art_err err;
	char out[64], errs[64];
	int st;

	s.io[0].how = s.io[1].how = s.io[2].how = ART_SPAWN_PIPE;
	s.nonblock = false;
	ok(art_spawn(&s, &ch, &err) == 0 && ch.pid > 0, "starts sh");
	ok(ch.fd[0] >= 3 && ch.fd[1] >= 3 && ch.fd[2] >= 3 &&
	    (fcntl(ch.fd[0], F_GETFD) & FD_CLOEXEC) &&
	    (fcntl(ch.fd[1], F_GETFD) & FD_CLOEXEC),
	    "our ends are 3 or more, close-on-exec");
	ok(!(fcntl(ch.fd[1], F_GETFL) & O_NONBLOCK), "blocking unless asked");
	ok(write(ch.fd[0], "hi\n", 3) == 3, "stdin is a pipe");
	close(ch.fd[0]);
	ok(strcmp(slurp(ch.fd[1], out, sizeof(out)), "out hi\n") == 0,
	    "stdout is a pipe (%s)", out);
	ok(strcmp(slurp(ch.fd[2], errs, sizeof(errs)), "err hi\n") == 0,
	    "stderr is a pipe (%s)", errs);
	st = art_spawn_wait(ch.pid);
	ok(exit_code(st) == 3, "its exit status comes back (%d)", st);
	ok(art_spawn_wait(ch.pid) == -1, "and it is reaped once");

	s = sh("cat; echo end", argv);
	s.io[0].how = ART_SPAWN_NULL;
	ok(strcmp(output_of(&s, buf, sizeof(buf), &st), "end\n") == 0 &&
	    exit_code(st) == 0, "stdin /dev/null reads nothing (%s)", buf);
	s = sh("echo x", argv);
	s.io[1].how = ART_SPAWN_PIPE;
	s.nonblock = true;
	ok(art_spawn(&s, &ch, &err) == 0 &&
	    (fcntl(ch.fd[1], F_GETFL) & O_NONBLOCK), "nonblock: our ends are");
	close(ch.fd[1]);
	art_spawn_wait(ch.pid);
}

static void
test_exec_failures_are_reported(void)
{
	char *argv[] = { "x", NULL }, *empty[] = { NULL };
	char *pathenv[] = { "PATH=/nonexistent-dir", NULL };
	struct art_spawn s = { .file = "/nonexistent/prog", .argv = argv };
	struct art_child ch;
	struct art_err err;
	char path[300];
	int fd;

	ok(art_spawn(&s, &ch, &err) == -1 && ch.pid == -1 &&
	    art_err_is(&err, "spawn_exec") && errno == ENOENT &&
	    strcmp(err.msg, "run /nonexistent/prog: No such file or "
	    "directory") == 0, "a missing file fails at once (%s)", err.msg);
	ok(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD,
	    "and the failed child is reaped");
	s.name = "tool 'x'";
	snprintf(path, sizeof(path), "%s/noshebang", tmp);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755)) != -1) {
		if (write(fd, "echo hi\n", 8) != 8)
			perror("write");
		close(fd);
	}
	s.file = path;
	ok(art_spawn(&s, &ch, &err) == -1 && art_err_is(&err, "spawn_exec") &&
	    strcmp(err.msg, "run tool 'x': Exec format error") == 0,
	    "no shell: a script without #! does not run (%s)", err.msg);
	s.file = "sh", s.name = NULL, s.env = pathenv;
	ok(art_spawn(&s, &ch, &err) == -1 && art_err_is(&err, "spawn_exec") &&
	    strcmp(err.msg, "run sh: not found in PATH") == 0,
	    "a name is looked up in the child's PATH (%s)", err.msg);
	s.file = "/bin/sh", s.env = empty, s.cwd = "/nonexistent-dir";
	ok(art_spawn(&s, &ch, &err) == -1 && art_err_is(&err, "spawn_exec") &&
	    strcmp(err.msg, "run /bin/sh: chdir '/nonexistent-dir': No such "
	    "file or directory") == 0, "a bad cwd is reported (%s)",
	    err.msg);
}

static void
test_cwd_env_and_path(void)
{
	char *argv[4], *env[] = { "FOO=bar", "PATH=/usr/bin:/bin", NULL };
	char buf[256];
	struct art_spawn s = sh("pwd; echo \"$FOO\"", argv);
	int st;

	s.cwd = "/", s.env = env, s.file = "sh";
	ok(strcmp(output_of(&s, buf, sizeof(buf), &st), "/\nbar\n") == 0 &&
	    exit_code(st) == 0, "cwd, env and PATH lookup (%s)", buf);
}

static void
test_descriptors_are_closed(void)
{
	char *argv[4], buf[256], script[128];
	struct art_spawn s;
	int p[2], q[2], st;

	if (pipe(p) == -1 || art_spawn_pipe(q) == -1) {
		ok(0, "pipe: %s", strerror(errno));
		return;
	}
	/* p is not close-on-exec: a child would inherit it but for us. */
	snprintf(script, sizeof(script), "echo x 2>/dev/null >&%d && echo "
	    "open || echo closed", p[1]);
	s = sh(script, argv);
	ok(strcmp(output_of(&s, buf, sizeof(buf), &st), "closed\n") == 0,
	    "a descriptor without FD_CLOEXEC is closed in the child (%s)",
	    buf);
	close(p[0]), close(p[1]);
	snprintf(script, sizeof(script), "echo x 2>/dev/null >&%d && echo "
	    "open || echo closed", q[1]);
	s = sh(script, argv);
	s.keep = &q[1], s.nkeep = 1;
	ok(strcmp(output_of(&s, buf, sizeof(buf), &st), "open\n") == 0,
	    "one in keep is inherited at its number (%s)", buf);
	ok(fcntl(q[1], F_GETFD) == FD_CLOEXEC, "ours stays close-on-exec");
	close(q[1]);
	ok(strcmp(slurp(q[0], buf, sizeof(buf)), "x\n") == 0,
	    "and the child wrote to it (%s)", buf);
}

static void
test_signals_are_reset(void)
{
	char *argv[4], buf[64];
	struct sigaction ign, old_int, old_pipe;
	sigset_t term, old_mask;
	struct art_spawn s;
	int st;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old_mask);
	s = sh("kill -INT $$; echo survived", argv);
	output_of(&s, buf, sizeof(buf), &st);
	ok(killed_by(st) == SIGINT, "we ignore SIGINT; the child does not "
	    "(%d)", st);
	s = sh("kill -PIPE $$; echo survived", argv);
	output_of(&s, buf, sizeof(buf), &st);
	ok(killed_by(st) == SIGPIPE, "nor SIGPIPE (%d)", st);
	s = sh("kill -TERM $$; echo survived", argv);
	output_of(&s, buf, sizeof(buf), &st);
	ok(killed_by(st) == SIGTERM, "we block SIGTERM; the child does not "
	    "(%d)", st);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
}

static void
test_process_groups(void)
{
	char *argv[] = { "sleep", "30", NULL };
	struct art_spawn s = { .file = "sleep", .argv = argv };
	struct art_child a, b, c;
	struct art_err err;

	s.pgid = ART_SPAWN_NEW_GROUP;
	ok(art_spawn(&s, &a, &err) == 0 && getpgid(a.pid) == a.pid,
	    "NEW_GROUP: it leads a group of its own at once");
	s.pgid = a.pid;
	ok(art_spawn(&s, &b, &err) == 0 && getpgid(b.pid) == a.pid,
	    "pgid: it joins that group");
	s.pgid = 0;
	ok(art_spawn(&s, &c, &err) == 0 && getpgid(c.pid) == getpgrp(),
	    "0: it stays in ours");
	art_spawn_signal_group(a.pid, SIGTERM);
	ok(killed_by(art_spawn_wait(b.pid)) == SIGTERM &&
	    killed_by(art_spawn_wait(a.pid)) == SIGTERM,
	    "one signal to the group reaches both");
	kill(c.pid, SIGKILL);
	art_spawn_wait(c.pid);
}

/* Milliseconds since t0. */
static long long
since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000LL +
	    (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Whether group pgid empties within about 3 s (SIGKILL takes a moment). */
static bool
group_gone(pid_t pgid)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (kill(-pgid, 0) == 0 || errno != ESRCH) {
		if (since(&t0) > 3000)
			return false;
		poll(NULL, 0, 10);
	}
	return true;
}

static void
test_stop_and_poll(void)
{
	char *argv[4];
	struct art_spawn s;
	struct art_child ch;
	struct art_err err;
	struct timespec t0;
	long long took;
	char ready[6];
	int st;

	s = sh("exit 4", argv);
	s.pgid = ART_SPAWN_NEW_GROUP;
	art_spawn(&s, &ch, &err);
	ok(art_spawn_exits_within(ch.pid, 3000) && art_spawn_poll(ch.pid) == 1,
	    "poll: it has exited");
	ok(art_spawn_poll(ch.pid) == 1, "and is not reaped by looking");
	ok(exit_code(art_spawn_stop(ch.pid, 1000, 1000)) == 4,
	    "stop: one that exits by itself keeps its status");
	ok(art_spawn_poll(ch.pid) == -1 && errno == ECHILD,
	    "poll: a reaped one is not ours");
	ok(art_spawn_stop(ch.pid, 0, 0) == -1, "stop: nor to stop");

	s = sh("exec sleep 30", argv);
	s.pgid = ART_SPAWN_NEW_GROUP;
	art_spawn(&s, &ch, &err);
	ok(art_spawn_poll(ch.pid) == 0, "poll: a sleeper runs");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = art_spawn_stop(ch.pid, 0, 3000);
	ok(killed_by(st) == SIGTERM && since(&t0) < 2500,
	    "stop: SIGTERM ends one that heeds it (%d)", st);

	s = sh("trap '' TERM; echo ready; sleep 30; sleep 30", argv);
	s.pgid = ART_SPAWN_NEW_GROUP;
	s.io[1].how = ART_SPAWN_PIPE;
	art_spawn(&s, &ch, &err);
	/* Once it has said so, it ignores SIGTERM, and so does its sleep. */
	ok(read(ch.fd[1], ready, sizeof(ready)) == 6, "a stubborn one starts");
	close(ch.fd[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = art_spawn_stop(ch.pid, 0, 200);
	took = since(&t0);
	ok(killed_by(st) == SIGKILL && took >= 150 && took < 2500,
	    "stop: SIGKILL after the grace (%d, %lld ms)", st, took);
	ok(group_gone(ch.pid), "and its child, in its group, is gone too");
}

static void
test_limits(void)
{
	char *argv[4], buf[64], want[32];
	struct art_spawn_limit lim = { RLIMIT_NOFILE, 17, 17 };
	struct art_spawn s = sh("ulimit -n", argv);
	struct rlimit cur;
	int st;

	/* valgrind keeps descriptors and memory of its own and refuses
	 * some limits (make check-valgrind). */
	if (getenv("ART_VALGRIND") != NULL) {
		tap_skip("resource limits under valgrind");
		return;
	}

	s.limits = &lim, s.nlimits = 1;
	ok(strcmp(output_of(&s, buf, sizeof(buf), &st), "17\n") == 0,
	    "a limit is set in the child (%s)", buf);
	if (getrlimit(RLIMIT_NOFILE, &cur) == 0 &&
	    cur.rlim_max != RLIM_INFINITY) {
		lim.soft = lim.hard = (uint64_t)cur.rlim_max + 1000;
		snprintf(want, sizeof(want), "%llu\n",
		    (unsigned long long)cur.rlim_max);
		s = sh("ulimit -n", argv);
		s.limits = &lim, s.nlimits = 1;
		ok(strcmp(output_of(&s, buf, sizeof(buf), &st), want) == 0,
		    "one past our hard limit is lowered to it (%s)", buf);
	} else
		ok(1, "# SKIP no hard limit on descriptors");
	ok(getrlimit(RLIMIT_NOFILE, &cur) == 0 && cur.rlim_cur != 17,
	    "ours are untouched");
}

/*
 * A child that exited and was not reaped is dead, though kill(pid, 0)
 * still finds it; its start time is kept until it is reaped.
 */
static void
test_alive(void)
{
	char *argv[4];
	struct art_spawn s = sh("read x", argv);
	struct art_child ch;
	struct art_err err;
	unsigned long long t;
	pid_t pid;

	ok(art_spawn_alive((long)getpid()), "we live");
	ok(!art_spawn_alive(0) && !art_spawn_alive(-1), "no pid 0 or -1");
	s.io[0].how = ART_SPAWN_PIPE;
	if (art_spawn(&s, &ch, &err) == -1) {
		ok(0, "spawn: %s", err.msg);
		return;
	}
	pid = ch.pid;
	ok(art_spawn_alive((long)pid), "a child that waits lives");
	t = art_spawn_started((long)pid);
	ok(t > 0 && t >= art_spawn_started((long)getppid()),
	    "its start time is known, and after our parent's (%llu)", t);
	close(ch.fd[0]);
	ok(art_spawn_exits_within(pid, 5000) && kill(pid, 0) == 0,
	    "it exited, unreaped: kill(pid, 0) still finds it");
	ok(!art_spawn_alive((long)pid), "but it does not live");
	ok(art_spawn_started((long)pid) == t, "its start time is unchanged");
	art_spawn_wait(pid);
	ok(!art_spawn_alive((long)pid) && art_spawn_started((long)pid) == 0,
	    "reaped, it is gone and has no start time");
}

int
main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmp, sizeof(tmp), "%s/spawn-test.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(tmp) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	alarm(60);	/* a child that hangs fails the test, not the run */
	test_exit_status_and_pipes();
	test_exec_failures_are_reported();
	test_cwd_env_and_path();
	test_descriptors_are_closed();
	test_signals_are_reset();
	test_process_groups();
	test_stop_and_poll();
	test_limits();
	test_alive();
	{
		char path[300];

		snprintf(path, sizeof(path), "%s/noshebang", tmp);
		unlink(path);
		rmdir(tmp);
	}
	return tap_done();
}
