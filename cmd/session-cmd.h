/* session-cmd.h - what agentrt-session's subcommands share */
#ifndef ART_CMD_SESSION_H
#define ART_CMD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "clock.h"
#include "ids.h"
#include "store.h"

#define MAX_AGENT_DIRS	16
#define MAX_INPUTS	64

/* Options, parsed once in main and passed down as const. */
struct opts {
	const char	*db;
	const char	*agent;
	const char	*id;
	const char	*identity;
	const char	*after;
	const char	*search;	/* ls --search TEXT */
	bool		 quiet;
	bool		 verbose;	/* run -v: say the new session's id */
	bool		 follow;
	jv		 identity_v;	/* --identity, parsed */
	uint64_t	 after_seq;	/* --after, parsed */
	/* run */
	const char	*session;
	const char	*message;
	const char	*turn_id;
	const char	*inputs[MAX_INPUTS];
	int		 ninputs;
	const char	*events;
	const char	*events_format;	/* ndjson, text; NULL: by isatty */
	const char	*agent_dirs[MAX_AGENT_DIRS];
	int		 nagent_dirs;
	const char	*tool_dirs[MAX_AGENT_DIRS];
	int		 ntool_dirs;
	size_t		 max_line;
	const char	*resume;	/* --resume: an interrupt id */
	const char	*payload;
	const char	*acks;		/* serve --acks: a fifo */
	const char	*clients;	/* serve --clients: more input lines */
	/* export, import, checkpoint, restore */
	bool		 children;	/* --children */
	const char	*as;		/* --as: the root's new id */
	bool		 hash;		/* --hash */
	const char	*output;	/* -o */
	const char	*policy;	/* replay --policy: a jq file */
};

/* The world a command runs in, made once in main and passed down. */
struct env {
	struct art_clock	 clock;
	struct art_ids		 ids;
	struct art_store	*store;
};

/* A failure after the store opened: said in one line; returns 1. */
int	session_failed(const struct art_err *);
/* An option's value, or with @FILE the file's contents (@- is stdin). */
jv	session_option_text(const char *name, const char *arg);
/* run: the engine on a ring (cmd/session-run.c). */
int	session_run(struct env *, const struct opts *, int, char **);
/* serve: a long-lived engine for many sessions (cmd/session-serve.c). */
int	session_serve(struct env *, const struct opts *, int, char **);
/* A session as a file (cmd/session-port.c). */
/*
 * The checked lines of the export at path (NULL or "-": stdin); a fault
 * is said on stderr with its line number and outcome ("nothing
 * imported"), and jv_invalid() returned.
 */
jv	session_read_export(const char *path, const char *outcome);
int	session_replay(struct env *, const struct opts *, int, char **);
int	session_export(struct env *, const struct opts *, int, char **);
int	session_import(struct env *, const struct opts *, int, char **);
int	session_checkpoint(struct env *, const struct opts *, int, char **);
int	session_restore(struct env *, const struct opts *, int, char **);

#endif
