/* shell.h - what agentrt-shell's files share: the shell, a turn, its view */
#ifndef ART_SHELL_H
#define ART_SHELL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <histedit.h>
#include <jv.h>

#include "agui.h"
#include "answer.h"
#include "buf.h"
#include "evtext.h"
#include "strvec.h"

#define SHELL_MAX_DIRS	16
/* The status of a turn stopped by Ctrl-C, as a shell reports SIGINT. */
#define SHELL_STOPPED	130

/* Settings from the command line; built in main, read-only after. */
struct opts {
	const char	*db;
	const char	*agent;
	const char	*session;
	const char	*command;	/* -c TEXT */
	char		*prompt;	/* PROMPT: the words, joined */
	bool		 cont;		/* -C: the newest session */
	bool		 lines;		/* --lines: a turn a line of stdin */
	const char	*agent_dirs[SHELL_MAX_DIRS];
	int		 nagent_dirs;
	const char	*tool_dirs[SHELL_MAX_DIRS];
	int		 ntool_dirs;
	const char	*mcps[SHELL_MAX_DIRS];
	int		 nmcps;
	const char	*tool_envs[SHELL_MAX_DIRS];	/* --tool-env */
	int		 ntool_envs;
	const char	*decide_jq;
	const char	*exec;
	const char	*url;
	const char	*model;
	const char	*record;
	const char	*replay;
	const char	*events;	/* --events FILE */
	const char	*events_format;	/* ndjson (NULL) or ag-ui */
	const char	*color;		/* --color: auto (NULL), always, never */
	const char	*system;	/* -S: the new sessions' system prompt */
};

struct shell {
	const struct opts *o;
	char		 bindir[4096];	/* the siblings' home; "": PATH */
	char		 sid[64];	/* the session; "" before a turn */
	char		 agent[256];	/* its agent; "" when there is none */
	bool		 builtin;	/* agent is the built-in chat agent on
					   model (-m with no agent file) */
	char		 model[256];	/* the -m or /model override; "" none */
	jv		 conf;		/* the user's settings (userconf.h) */
	const char	**dirs;		/* where agents are (art_agent_dirs) */
	size_t		 ndirs;
	bool		 tty;		/* an interactive REPL on a terminal */
	FILE		*events;	/* --events, open for appending */
	bool		 color;		/* ANSI colour on stdout */
	bool		 quit;
	EditLine	*el;
	History		*hist;
	char		 histfile[4096];
	char		 prompt[512];
	bool		 interrupted;	/* Ctrl-C came while reading a line */
	/* The last turn's structured answer's follow-ups, for /1, /2, ...:
	 * the engine caps them to these sizes, so they fit. */
	char		 followups[ART_ANSWER_FOLLOWUPS_MAX]
			    [ART_ANSWER_FOLLOWUP_MAX + 1];
	size_t		 nfollowups;
};

/* One turn's input: message, input (client input JSON) or resume. */
struct turn {
	const char	*message;
	const char	*input;
	const char	*resume;
	const char	*payload;	/* resume's JSON, or NULL */
};

/* What a turn shows as it runs, and what it leaves for the caller. */
struct render {
	struct shell	*sh;
	char		 root[64];	/* the session the turn drives */
	struct art_evtext *text;	/* the events as text (lib/evtext) */
	struct art_agui	*agui;		/* --events-format ag-ui (lib/agui) */
	bool		 events_failed;	/* a write to --events failed */
	bool		 stopped;	/* Ctrl-C stopped the turn */
	char		 agent[256];	/* a sub-agent's, as lib/evtext asks */
	bool		 screen;	/* stdout is a terminal: the spinner */
	bool		 spinning;	/* the spinner is on the screen */
	const char	*doing;		/* what the spinner says */
	unsigned	 frame;
	int64_t		 started;	/* monotonic ms: the turn's start */
	int64_t		 quiet_since;	/* the last time we drew something */
	int64_t		 drawn_at;	/* the spinner's last frame */
	jv		 completion;	/* the root's completion, or null */
	jv		 answer;	/* the root's structured answer, or null */
	jv		 interrupt;	/* last suspension: id, reason, … */
	struct art_buf	 errline;	/* stage stderr not yet a whole line */
};

/* The flags the signal handlers set; everything else is passed down. */
extern volatile sig_atomic_t shell_sigint;
extern volatile sig_atomic_t shell_sigwinch;

/* shell-proc.c: running siblings, each a command line whose v[0] is the
 * sibling's name; out of memory dies */
void	args_add(struct art_strvec *, const char *);
/* Runs a, then releases it; its stdout to outfd (-1: ours), stderr ours
 * or (quiet) none.  Its exit status, or -1 (said) when it could not run. */
int	shell_run(const struct shell *, struct art_strvec *a, int outfd,
	    bool quiet);
/* Runs a, then releases it, and returns its stdout parsed as JSON values,
 * one array; jv_invalid() when it failed (its stderr said why, unless
 * quiet). */
jv	shell_json(const struct shell *, struct art_strvec *a, bool quiet);
/* Runs one turn on a ring, rendered through r; the session's status. */
int	shell_turn(struct shell *, const struct turn *, struct render *);
/* The built-in chat agent's config on sh->model, with the --tools
 * tools (art_agent_chat()); jv_invalid() with err. */
jv	shell_builtin_config(const struct shell *, struct art_err *);
/* Ends the session's turn (agentrt-session cancel); what it did stays. */
void	shell_cancel(const struct shell *);

/* shell-render.c: showing a turn */
void	render_init(struct render *, struct shell *);
void	render_release(struct render *);
void	render_event(struct render *, jv ev);
void	render_stderr(struct render *, const char *, size_t, bool eof);
void	render_end(struct render *, int status);
/* The terminal's columns (0 when stdout is not one). */
size_t	render_columns(void);
/* Called as the ring runs: the spinner while the turn shows nothing. */
void	render_tick(struct render *);
/* Does a turn outside the REPL (-c, piped lines) stream its reply to a
 * terminal, rather than print it whole at the end? */
bool	render_streams(const struct shell *);
void	render_dim(const struct shell *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	render_error(const struct shell *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* shell-cmds.c: sessions, interrupts and slash commands */
/* Runs a turn and deals with what it parks on; the turn's status. */
int	shell_send(struct shell *, const struct turn *, jv *reply);
/* Runs a line starting with '/'; false when there is no such command. */
bool	shell_slash(struct shell *, char *line);
void	shell_slash_help(FILE *, const char *indent);
jv	shell_sessions(const struct shell *);
jv	shell_agents(const struct shell *);
jv	shell_config(const struct shell *);
jv	shell_node_ids(const struct shell *);
/* The session whose id is or starts with id, into sh; -1 (said) if none. */
int	shell_switch(struct shell *, const char *id);
const char *const *shell_slash_names(void);

/* shell-edit.c: the line editor */
void	edit_init(struct shell *);
void	edit_end(struct shell *);
/* The next line, prompt shown (malloc'd, no newline); NULL at EOF.  After
 * Ctrl-C, "" with sh->interrupted set.  prefill is typed in first. */
char	*edit_line(struct shell *, const char *prompt, const char *prefill);
void	edit_remember(struct shell *, const char *line);

#endif
