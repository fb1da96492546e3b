/* tools.h - tools: executables and jq programs in the tools directories */
#ifndef ART_TOOLS_H
#define ART_TOOLS_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/*
 * A tool NAME is found in the first tools directory that holds either an
 * executable regular file NAME or a jq program NAME.jq (in a directory
 * holding both, the executable wins).  An executable runs without a
 * shell, in a process group of its own, with a scrubbed environment: its
 * arguments on stdin, its result on stdout, exit 0 ok, 75 (EX_TEMPFAIL) a
 * retryable error, anything else an error whose message is the tail of
 * stderr.  A jq tool runs in this process over the parsed arguments, and
 * sees no environment.
 */

#define ART_TOOLS_NAME_MAX	64	/* longest tool name, in bytes */
#define ART_TOOLS_MAX_OUTPUT	((size_t)1 << 20)	/* stdout kept */
#define ART_TOOLS_STDERR_KEEP	4096	/* stderr kept: its last bytes */
#define ART_TOOLS_ERROR_MAX	1024	/* of which an error message quotes */
#define ART_TOOLS_TIMEOUT_MS	120000	/* a call's limit with no deadline */
#define ART_TOOLS_KILL_GRACE_MS	2000	/* from SIGTERM to SIGKILL */
#define ART_TOOLS_EX_TEMPFAIL	75	/* exit status of a retryable error */
#define ART_TOOLS_POLLFDS	3	/* pollfds one call needs at most */

/*
 * Whether name may name a tool: 1 to ART_TOOLS_NAME_MAX bytes of A-Z a-z
 * 0-9 '_' '.' '-', the first not '.' or '-', not ending in ".jq".  So a
 * name is never a path, a hidden file, or a jq tool's file name.  NULL is
 * not valid.
 */
bool	art_tools_name_is_valid(const char *name);

enum art_tools_kind {
	ART_TOOLS_NONE,		/* no tool of that name */
	ART_TOOLS_EXEC,		/* an executable */
	ART_TOOLS_JQ,		/* a jq program, NAME.jq */
	ART_TOOLS_NOEXEC	/* a regular file NAME without its exec bit */
};

/*
 * Looks for the tool name in dirs, a NULL-terminated list searched in
 * order; the first directory holding an executable NAME, a NAME.jq or a
 * plain file NAME, in that order, decides.  So a tool whose file lost
 * its exec bit is ART_TOOLS_NOEXEC, which runs nothing but can be said
 * (art_tools_noexec_msg()), rather than a tool that is not there.
 * name must be valid (art_tools_name_is_valid()); an invalid one
 * is ART_TOOLS_NONE and touches no file.  Otherwise, but for
 * ART_TOOLS_NONE, *path is the file's path, which the caller frees.
 * Returns -1 with err "nomem" when out of memory.
 */
int	art_tools_find(char *const *dirs, const char *name, char **path,
	    struct art_err *);

/*
 * The tools in dirs, as an array of {"name":…,"path":…,"executable":…}
 * sorted by name; a name found in an earlier directory hides it in later
 * ones.  "executable" is false for a plain file that is meant as a tool
 * but cannot run: a script ("#!") or a file with NAME.json beside it,
 * without its exec bit; other plain files (a README) are not listed.
 * Missing or unreadable directories are skipped.  Caller owns the array;
 * returns jv_invalid() with err "nomem" when out of memory.
 */
jv	art_tools_list(char *const *dirs, struct art_err *);
/*
 * "tool 'NAME' is not executable (chmod +x PATH)", for an
 * ART_TOOLS_NOEXEC tool, in buf of n bytes; returns buf.
 */
const char *art_tools_noexec_msg(const char *name, const char *path,
	    char *buf, size_t n);

/*
 * The declaration of the tool name whose file is path: the JSON object in
 * NAME.json beside it, with its "name" set to name, or {"name":name} when
 * there is no such file.  Returns jv_invalid() with err "bad_declaration"
 * when the file cannot be read or holds no JSON object.
 */
jv	art_tools_declaration(const char *path, const char *name,
	    struct art_err *);

/* art_spawn_pipe() and art_spawn_nonblock() (spawn.h), by their old names. */
int	art_tools_pipe(int p[2]);
void	art_tools_nonblock(int fd);

#define ART_TOOLS_ENV_NAME_MAX	128	/* longest variable name passed */

/*
 * Whether name is an environment variable name a tool may be handed:
 * 1 to ART_TOOLS_ENV_NAME_MAX bytes of A-Z a-z 0-9 '_', the first not a
 * digit.  NULL is not valid.
 */
bool	art_tools_env_name_is_valid(const char *name);
/*
 * Whether name is a variable that holds a model provider's credential:
 * ANTHROPIC_AUTH_TOKEN, and the key variable of each provider in the
 * providers table (art_providers: OPENAI_API_KEY, ANTHROPIC_API_KEY).
 * No tool or MCP server is ever given one.
 */
bool	art_tools_env_is_key(const char *name);
/*
 * Checks that name may be passed through to a tool (--env, a
 * declaration's "env"): 0, or -1 with err "bad_env" and a message that
 * says why, naming it ("'OPENAI_API_KEY': a provider key is never passed
 * to a tool"; "'1X': not an environment variable name").
 */
int	art_tools_env_check(const char *name, struct art_err *);

/*
 * The environment of a tool, a new NULL-terminated array the caller frees
 * with art_tools_env_free(): those of env's variables that are on the
 * allow-list (PATH HOME LANG LC_ALL LC_CTYPE TZ TMPDIR USER), then each
 * variable pass names (NULL-terminated; NULL for none) that env sets,
 * then AGENTRT_SESSION_ID, AGENTRT_CALL_ID and AGENTRT_ATTEMPT.  A name
 * art_tools_env_check() refuses, or one of those three, is skipped, so a
 * provider key can never get through; each variable is there once, as
 * getenv() would see it.  env (environ) and pass are borrowed.  Returns
 * NULL when out of memory.
 */
char	**art_tools_env(char *const *env, const char *const *pass,
	    const char *session_id, const char *call_id, int64_t attempt);
void	art_tools_env_free(char **);

/*
 * A tool's stdout, kept up to max bytes; bytes past that are counted and
 * dropped.  Embedded: art_tools_out_init() then art_tools_out_release().
 */
struct art_tools_out {
	char	*buf;
	size_t	 len, cap;
	size_t	 max;
	size_t	 total;		/* every byte offered, kept or not */
};

void	art_tools_out_init(struct art_tools_out *, size_t max);
void	art_tools_out_release(struct art_tools_out *);
/* Keeps what fits; -1 with err "nomem" when out of memory. */
int	art_tools_out_add(struct art_tools_out *, const char *, size_t,
	    struct art_err *);
bool	art_tools_out_is_truncated(const struct art_tools_out *);
/*
 * The result text, a new jv string: what was kept, less one trailing
 * newline; when output was dropped, cut back to a whole UTF-8 character
 * and followed by "\n[output truncated at MAX bytes]".  Invalid UTF-8
 * becomes U+FFFD.
 */
jv	art_tools_out_text(const struct art_tools_out *);
/*
 * Whether what art_tools_out_text() keeps is text: well-formed UTF-8
 * (no overlong forms, surrogates or code points past U+10FFFF) holding
 * no NUL byte.  Bytes dropped past the cap are not looked at.
 */
bool	art_tools_out_is_text(const struct art_tools_out *);

/* The last ART_TOOLS_STDERR_KEEP bytes of a tool's stderr.  Embedded. */
struct art_tools_tail {
	char	 buf[ART_TOOLS_STDERR_KEEP];
	size_t	 len;
};

void	art_tools_tail_init(struct art_tools_tail *);
void	art_tools_tail_add(struct art_tools_tail *, const char *, size_t);
/*
 * The last max bytes (at most) of what was kept, starting at a whole
 * UTF-8 character, with white space trimmed at both ends: a new jv
 * string, "" when nothing but white space was written.
 */
jv	art_tools_tail_text(const struct art_tools_tail *, size_t max);

/*
 * jq tools.  A program is compiled on first use and kept, by path, for the
 * cache's life; one that fails to compile is tried again on next use.  It
 * runs with env, $ENV and stderr shadowed (env and $ENV are {}, stderr
 * writes nothing) and no module search path, so it cannot import modules.
 */
struct art_tools_jq;

struct art_tools_jq *art_tools_jq_new(void);	/* NULL: out of memory */
void	art_tools_jq_free(struct art_tools_jq *);

/*
 * Runs the jq tool at path over args[0..len) (NUL-terminated at len), the
 * raw arguments: an empty or all-white-space string is null.  Returns a
 * decision action the caller owns: {"type":"tool.result","result":TEXT},
 * TEXT being the outputs, strings as they are and other values as compact
 * JSON, joined by newlines and capped as art_tools_out_text() caps them;
 * or {"type":"tool.error","error":…,"retryable":false} when the arguments
 * are not JSON, the program does not compile, or it raises an error.
 */
jv	art_tools_jq_run(struct art_tools_jq *, const char *path,
	    const char *args, size_t len, size_t max_output);

/*
 * One running executable tool.  The caller polls the descriptors
 * art_tools_call_pollfds() gives and hands the results to
 * art_tools_call_step(), which also reaps the process and applies the
 * time limit; it must be called too when the process may have exited
 * (SIGCHLD) and when art_tools_call_due_ms() is reached.  When the limit
 * passes, the tool's process group gets SIGTERM, then SIGKILL after the
 * grace.  When the tool exits, whatever is left of its group is killed.
 * The process must ignore SIGPIPE: a tool may exit before reading all of
 * its stdin, and the write that finds out must fail, not kill us.
 */
struct art_tools_call;

/*
 * Resource limits a tool runs under, set in its process before execve;
 * 0 leaves a limit as this process has it.  A limit is never raised past
 * the hard limit this process has (it is lowered to it instead), so
 * setting one cannot fail for want of privilege, and soft and hard limits
 * are both set, so the tool cannot raise them again.  cpu_secs is the
 * soft RLIMIT_CPU, which sends SIGXCPU, and the hard one, which sends
 * SIGKILL, is a second more.
 */
struct art_tools_limits {
	uint64_t	 cpu_secs;	/* RLIMIT_CPU */
	uint64_t	 memory;	/* RLIMIT_AS, in bytes */
	uint64_t	 files;		/* RLIMIT_NOFILE */
};

struct art_tools_spec {
	const char	*name;		/* for messages */
	const char	*path;		/* the executable */
	char *const	*env;		/* from art_tools_env() */
	const char	*cwd;		/* NULL: this process's */
	const char	*input;		/* written to stdin, then closed */
	size_t		 input_len;
	size_t		 max_output;	/* of stdout; 0: ART_TOOLS_MAX_OUTPUT */
	int64_t		 timeout_ms;	/* from start; at least 1 is used */
	int64_t		 kill_grace_ms;
	struct art_tools_limits limits;
	const char	*session_id;	/* named in the settle */
	const char	*call_id;
	int64_t		 attempt;
};

/*
 * Starts the tool; the spec's strings are copied or no longer needed on
 * return.  now_ms is art_clock_mono_ms().  Returns NULL with err
 * "tool_busy" when the system is short of processes, descriptors or
 * memory (worth a retry), or "tool_exec" when the tool could not be
 * executed (a bad file, a bad cwd, a limit that could not be set).  It
 * is started by art_spawn() (spawn.h): it never runs signal handlers of
 * ours (every signal is default and unblocked in it) and inherits no
 * descriptor of ours but its three pipes.
 */
struct art_tools_call *art_tools_call_start(const struct art_tools_spec *,
	    int64_t now_ms, struct art_err *);
/* Kills the group of a tool still running with SIGKILL and reaps it. */
void	art_tools_call_free(struct art_tools_call *);

/* Fills fds (ART_TOOLS_POLLFDS of room) with what to poll; returns count. */
int	art_tools_call_pollfds(const struct art_tools_call *,
	    struct pollfd *fds);
/*
 * Moves the call on: I/O on the fds that poll found ready (fds as
 * art_tools_call_pollfds() filled them, or NULL and 0), then reaping,
 * then timers.  -1 with err "nomem" when out of memory.
 */
int	art_tools_call_step(struct art_tools_call *, const struct pollfd *fds,
	    int nfds, int64_t now_ms, struct art_err *);
/* When step must next run, art_clock_mono_ms() time; INT64_MAX: never. */
int64_t	art_tools_call_due_ms(const struct art_tools_call *);
bool	art_tools_call_is_done(const struct art_tools_call *);
/* The process group, which is the tool's pid. */
long	art_tools_call_pid(const struct art_tools_call *);
/*
 * The settle line of a done call, caller-owned:
 * {"type":"tool.result","session_id","id","attempt","result":TEXT} or
 * {"type":"tool.error",…,"error":MSG,"retryable":B}.  MSG is "deadline
 * exceeded" (retryable) after the time limit; "killed by signal XCPU:
 * CPU time limit (--cpu N)" when the CPU limit killed it (SIGXCPU, or
 * SIGKILL once it had used the limit); "output is not UTF-8 text (N
 * bytes)" when it exited 0 but its output is not art_tools_out_is_text()
 * (N counts every byte it wrote); else the trimmed last
 * ART_TOOLS_ERROR_MAX bytes of stderr, else "exit status N" or "killed by
 * signal S", these two followed by " (under --memory M, --files N)" for
 * the limits of those set, as a failed allocation or open may be why.  B
 * is true for exit status 75 and the time limit.
 */
jv	art_tools_call_settle(const struct art_tools_call *);

#endif
