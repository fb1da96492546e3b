/* spawn.c - one way to start a child process, and to end it
 *
 * The parent does all the work that may allocate: it finds the file in
 * PATH, makes the pipes, opens /dev/null, lowers the limits to what it
 * may set, and learns how many descriptors the child must close.  The
 * child only applies that plan, then execs; a step that fails writes
 * {step, errno} up the close-on-exec status pipe and exits 127.  The
 * parent's read of that pipe ends in EOF when execve succeeds.
 */
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLOSE_FDS_MAX	65536	/* the child closes descriptors below this */
#define MAX_LIMITS	8
#define POLL_MS		10	/* art_spawn_exits_within()'s step */

extern char **environ;

/* What failed in the child before execve, sent up the status pipe. */
enum step { STEP_PGID = 1, STEP_CHDIR, STEP_DUP, STEP_RLIMIT, STEP_EXEC };
struct failure {
	int	step;
	int	errnum;
};

/* Everything the child needs, worked out before the fork. */
struct plan {
	const struct art_spawn *s;
	const char	*path;
	char *const	*env;
	int		 src[3];	/* dup2'd onto 0, 1, 2; -1: ours */
	struct rlimit	 rl[MAX_LIMITS];
	int		 res[MAX_LIMITS];
	int		 nlimits;
	int		 bound;		/* close 3 up to this */
	int		 ctl;		/* the status pipe's write end */
	pid_t		 parent;	/* who forks */
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Makes fd close-on-exec and at least 3; the new fd, or -1. */
static int
settle_fd(int fd)
{
	int nfd;

	if (fd >= 3)
		return fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ? -1 : fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

int
art_spawn_pipe(int p[2])
{
	if (pipe(p) == -1)
		return -1;
	if ((p[0] = settle_fd(p[0])) == -1 || (p[1] = settle_fd(p[1])) == -1) {
		close_fd(&p[0]);
		close_fd(&p[1]);
		return -1;
	}
	return 0;
}

void
art_spawn_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl != -1)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

bool
art_spawn_is_executable(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0;
}

/* The value of name in env, or NULL. */
static const char *
env_value(char *const *env, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/*
 * file as it is when it holds a '/', else found in env's PATH as
 * execvp() would search it: a malloc'd path, or NULL with errno (ENOENT:
 * not found).
 */
static char *
find_file(const char *file, char *const *env)
{
	const char *p, *e, *dirs;
	size_t n;
	char *f;

	if (strchr(file, '/') != NULL)
		return strdup(file);
	if ((dirs = env_value(env, "PATH")) == NULL)
		dirs = "/usr/bin:/bin";
	for (p = dirs;; p = e + 1) {
		e = strchr(p, ':');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if ((f = malloc(n + strlen(file) + 3)) == NULL)
			return NULL;
		/* An empty entry is the current directory, as for execvp(). */
		sprintf(f, "%.*s/%s", n > 0 ? (int)n : 1, n > 0 ? p : ".",
		    file);
		if (art_spawn_is_executable(f))
			return f;
		free(f);
		if (e == NULL)
			break;
	}
	errno = ENOENT;
	return NULL;
}

/*
 * One past the highest descriptor open here, for the child to close what
 * it must not inherit (a descriptor without FD_CLOEXEC, ours or our
 * parent's): read from /proc/self/fd where there is one, else the limit.
 */
static int
fd_bound(void)
{
	struct rlimit rl;
	struct dirent *de;
	long n, hi = -1;
	char *end;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			n = strtol(de->d_name, &end, 10);
			if (*end == '\0' && end != de->d_name && n > hi)
				hi = n;
		}
		closedir(d);
		if (hi >= 0)
			return (int)(hi < CLOSE_FDS_MAX ? hi + 1 :
			    CLOSE_FDS_MAX);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < CLOSE_FDS_MAX)
		return (int)rl.rlim_cur;
	return CLOSE_FDS_MAX;
}

/* The limits, lowered to the hard limits we have. */
static void
plan_limits(struct plan *p)
{
	const struct art_spawn *s = p->s;
	struct rlimit cur, *rl;
	int i;

	p->nlimits = 0;
	for (i = 0; i < s->nlimits && i < MAX_LIMITS; i++) {
		rl = &p->rl[p->nlimits];
		p->res[p->nlimits++] = s->limits[i].resource;
		rl->rlim_cur = (rlim_t)s->limits[i].soft;
		rl->rlim_max = (rlim_t)s->limits[i].hard;
		if (getrlimit(s->limits[i].resource, &cur) == 0 &&
		    cur.rlim_max != RLIM_INFINITY) {
			if (rl->rlim_max > cur.rlim_max)
				rl->rlim_max = cur.rlim_max;
			if (rl->rlim_cur > cur.rlim_max)
				rl->rlim_cur = cur.rlim_max;
		}
	}
}

/* --- the child: async-signal-safe calls only, up to execve() --------- */

static _Noreturn void
fail_child(int ctl, int step)
{
	struct failure f = { step, errno };
	ssize_t r;

	do
		r = write(ctl, &f, sizeof(f));
	while (r == -1 && errno == EINTR);
	_exit(127);
}

static void
reset_signals(void)
{
	struct sigaction sa;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig <= SIGRTMAX; sig++)
		sigaction(sig, &sa, NULL);	/* KILL, STOP: EINVAL, fine */
}

static bool
is_kept(const struct plan *p, int fd)
{
	int i;

	for (i = 0; i < p->s->nkeep; i++)
		if (p->s->keep[i] == fd)
			return true;
	return false;
}

/*
 * The caller's descriptors for 0, 1 and 2 may themselves be 0, 1 or 2:
 * those are moved out of the way (close-on-exec) before any dup2().
 */
static int
set_stdio(struct plan *p)
{
	int i;

	for (i = 0; i < 3; i++)
		if (p->src[i] >= 0 && p->src[i] < 3 && p->src[i] != i &&
		    (p->src[i] = fcntl(p->src[i], F_DUPFD_CLOEXEC, 3)) == -1)
			return -1;
	for (i = 0; i < 3; i++) {
		if (p->src[i] == i) {
			if (fcntl(i, F_SETFD, 0) == -1)
				return -1;
		} else if (p->src[i] >= 0 && dup2(p->src[i], i) == -1)
			return -1;
	}
	return 0;
}

static void
close_inherited(const struct plan *p)
{
	int fd, i;

	for (i = 0; i < p->s->nkeep; i++)
		fcntl(p->s->keep[i], F_SETFD, 0);
	for (fd = 3; fd < p->bound; fd++)
		if (fd != p->ctl && !is_kept(p, fd))
			close(fd);
}

/*
 * Limits go last, after the dup2() calls: RLIMIT_NOFILE caps the numbers
 * of new descriptors, and the pipes may be numbered past it.
 */
static _Noreturn void
child(struct plan *p)
{
	const struct art_spawn *s = p->s;
	sigset_t none;
	int i;

	reset_signals();
	/* Dies with its parent: a stage killed takes its tool with it. */
	if (s->die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    getppid() != p->parent))
		_exit(127);
	if (s->pgid != 0 && setpgid(0, s->pgid == ART_SPAWN_NEW_GROUP ? 0 :
	    s->pgid) == -1)
		fail_child(p->ctl, STEP_PGID);
	if (s->cwd != NULL && chdir(s->cwd) == -1)
		fail_child(p->ctl, STEP_CHDIR);
	if (set_stdio(p) == -1)
		fail_child(p->ctl, STEP_DUP);
	close_inherited(p);
	for (i = 0; i < p->nlimits; i++)
		if (setrlimit(p->res[i], &p->rl[i]) == -1)
			fail_child(p->ctl, STEP_RLIMIT);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(p->path, s->argv, p->env);
	fail_child(p->ctl, STEP_EXEC);
}

/* --- the parent ------------------------------------------------------- */

static const char *
name_of(const struct art_spawn *s)
{
	return s->name != NULL ? s->name : s->file;
}

static const char *
busy(const struct art_spawn *s)
{
	return s->busy_code != NULL ? s->busy_code : "spawn_busy";
}

static const char *
cannot(const struct art_spawn *s)
{
	return s->exec_code != NULL ? s->exec_code : "spawn_exec";
}

static int
failed(const struct art_spawn *s, const struct failure *f,
    struct art_err *err)
{
	if (f->step == STEP_CHDIR)
		art_err_set(err, cannot(s), "run %s: chdir '%s': %s",
		    name_of(s), s->cwd, strerror(f->errnum));
	else if (f->step == STEP_RLIMIT)
		art_err_set(err, cannot(s), "run %s: set a resource "
		    "limit: %s", name_of(s), strerror(f->errnum));
	else
		art_err_set(err, f->step == STEP_EXEC ? cannot(s) : busy(s),
		    "run %s: %s", name_of(s), strerror(f->errnum));
	errno = f->errnum;
	return -1;
}

/* Sets up stream i: the child's end in p->src[i], ours in ch->fd[i]. */
static int
open_stream(struct plan *p, struct art_child *ch, int i)
{
	const struct art_spawn_io *io = &p->s->io[i];
	int pp[2];

	switch (io->how) {
	case ART_SPAWN_PIPE:
		if (art_spawn_pipe(pp) == -1)
			return -1;
		p->src[i] = i == 0 ? pp[0] : pp[1];
		ch->fd[i] = i == 0 ? pp[1] : pp[0];
		return 0;
	case ART_SPAWN_NULL:
		p->src[i] = open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) |
		    O_CLOEXEC);
		return p->src[i] == -1 ? -1 : 0;
	case ART_SPAWN_FD:
		p->src[i] = io->fd;
		return 0;
	default:
		return 0;
	}
}

/* Closes the child's ends we made (not the caller's descriptors). */
static void
close_child_ends(struct plan *p)
{
	int i;

	for (i = 0; i < 3; i++)
		if (p->s->io[i].how != ART_SPAWN_FD)
			close_fd(&p->src[i]);
}

/* Forks; the child never returns.  Our pid, or -1 with errno. */
static pid_t
fork_child(struct plan *p)
{
	sigset_t all, old;
	pid_t pid;
	int e;

	/* No handler of ours may run in the child before it resets them. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	if ((pid = fork()) == 0)
		child(p);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	if (pid > 0 && p->s->pgid != 0)
		setpgid(pid, p->s->pgid == ART_SPAWN_NEW_GROUP ? pid :
		    p->s->pgid);
	return pid;
}

/* Whether the child reported a failure; reaps it if so. */
static bool
child_failed(pid_t pid, int ctl, struct failure *f)
{
	ssize_t r;

	do
		r = read(ctl, f, sizeof(*f));
	while (r == -1 && errno == EINTR);
	if (r != (ssize_t)sizeof(*f))
		return false;
	art_spawn_wait(pid);
	return true;
}

static int
start(struct plan *p, struct art_child *ch, struct art_err *err)
{
	int ctl[2] = { -1, -1 }, i;
	struct failure f;
	pid_t pid;

	for (i = 0; i < 3; i++)
		if (open_stream(p, ch, i) == -1)
			goto busy;
	if (art_spawn_pipe(ctl) == -1)
		goto busy;
	p->ctl = ctl[1];
	p->bound = fd_bound();
	if ((pid = fork_child(p)) == -1)
		goto busy;
	close_fd(&ctl[1]);
	close_child_ends(p);
	if (child_failed(pid, ctl[0], &f)) {
		close_fd(&ctl[0]);
		return failed(p->s, &f, err);
	}
	close_fd(&ctl[0]);
	ch->pid = pid;
	return 0;
busy:
	f.errnum = errno;
	close_fd(&ctl[0]), close_fd(&ctl[1]);
	close_child_ends(p);
	art_err_set(err, busy(p->s), "run %s: %s", name_of(p->s),
	    strerror(f.errnum));
	errno = f.errnum;
	return -1;
}

int
art_spawn(const struct art_spawn *s, struct art_child *ch,
    struct art_err *err)
{
	struct plan p = { .s = s, .src = { -1, -1, -1 }, .ctl = -1,
	    .parent = getpid() };
	char *path;
	int i, e;

	ch->pid = -1;
	ch->fd[0] = ch->fd[1] = ch->fd[2] = -1;
	if (s->file == NULL || s->file[0] == '\0') {
		art_err_set(err, cannot(s), "run %s: no program named",
		    s->name != NULL ? s->name : "a child");
		errno = ENOENT;
		return -1;
	}
	p.env = s->env != NULL ? s->env : environ;
	if ((path = find_file(s->file, p.env)) == NULL) {
		e = errno;
		art_err_set(err, e == ENOENT ? cannot(s) : busy(s),
		    "run %s: %s", name_of(s), e == ENOENT ?
		    "not found in PATH" : strerror(e));
		errno = e;
		return -1;
	}
	p.path = path;
	plan_limits(&p);
	if (start(&p, ch, err) == -1) {
		e = errno;
		for (i = 0; i < 3; i++)
			close_fd(&ch->fd[i]);
		free(path);
		errno = e;
		return -1;
	}
	free(path);
	for (i = 0; i < 3; i++)
		if (ch->fd[i] >= 0 && s->nonblock)
			art_spawn_nonblock(ch->fd[i]);
	return 0;
}

/* --- ending ------------------------------------------------------------- */

int
art_spawn_poll(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
		return errno == ECHILD ? -1 : 0;
	return si.si_pid != 0;
}

bool
art_spawn_exits_within(pid_t pid, int64_t ms)
{
	struct timespec ts = { 0, POLL_MS * 1000000L };

	for (;;) {
		if (art_spawn_poll(pid) != 0)
			return true;
		if (ms <= 0)
			return false;
		nanosleep(&ts, NULL);
		ms -= POLL_MS;
	}
}

void
art_spawn_signal_group(pid_t pgid, int sig)
{
	kill(-pgid, sig);
	if (sig == SIGTERM)
		kill(-pgid, SIGCONT);
}

int
art_spawn_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return st;
}

int
art_spawn_reap_group(pid_t pid)
{
	kill(-pid, SIGKILL);
	return art_spawn_wait(pid);
}

int
art_spawn_stop(pid_t pid, int64_t wait_ms, int64_t grace_ms)
{
	if (!art_spawn_exits_within(pid, wait_ms)) {
		art_spawn_signal_group(pid, SIGTERM);
		art_spawn_exits_within(pid, grace_ms);
	}
	if (art_spawn_poll(pid) == -1)
		return -1;
	return art_spawn_reap_group(pid);
}

/* --- other processes ------------------------------------------------------ */

/*
 * Process pid's /proc/PID/stat fields after its name, into buf; NULL when
 * there is no such file.  The name may hold spaces and parentheses: the
 * fields follow the last ')'.
 */
static const char *
stat_fields(long pid, char *buf, size_t size)
{
	char path[64], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return NULL;
	return p + 2;
}

bool
art_spawn_alive(long pid)
{
	char buf[1024];
	const char *f;

	if (pid <= 0 || (kill((pid_t)pid, 0) == -1 && errno != EPERM))
		return false;
	/* Field 3, the state: Z a zombie, X dead. */
	f = stat_fields(pid, buf, sizeof(buf));
	return f == NULL || (*f != 'Z' && *f != 'X');
}

unsigned long long
art_spawn_started(long pid)
{
	char buf[1024];
	const char *p = stat_fields(pid, buf, sizeof(buf));
	int i;

	/* Field 22, starttime: the 20th after the state. */
	for (i = 0; i < 19 && p != NULL; i++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	return p != NULL ? strtoull(p, NULL, 10) : 0;
}
