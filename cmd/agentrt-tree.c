/* agentrt-tree - a session's message tree: show, path, branches, checkout */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jv.h>

#include "clock.h"
#include "diag.h"
#include "engine.h"
#include "err.h"
#include "ids.h"
#include "json.h"
#include "log.h"
#include "ndjson.h"
#include "opt.h"
#include "session.h"
#include "store.h"
#include "tree.h"
#include "treeview.h"

struct opts {
	const char	*db;
	const char	*format;	/* export */
	bool		 dot;		/* show */
};

/* What one read transaction gathers: the tree and the paths asked for. */
struct view {
	const char	*sid;
	const char	*names[2];	/* NODE arguments; NULL: the head */
	int		 npaths;	/* paths to read: 0, 1 or 2 */
	jv		 head;		/* the head's id, or null */
	jv		 nodes;
	jv		 ids[2];	/* the ids root..node of each path */
	jv		 paths[2];	/* the messages root..node */
};

struct cmd {
	const char	*name;
	int		(*run)(const struct opts *, struct view *);
	const char	*usage;		/* also its synopsis in --help */
	const char	*operands;	/* for completion: art_opt_complete_cmd */
	const char	*help;
	int		 min_args;	/* after SESSION */
	int		 max_args;
	int		 npaths;
};

enum { OPT_DOT = 256, OPT_FORMAT };

static const struct art_opt options[] = {
	{ "db", 'd', "DIR", ART_OPT_DIR, NULL, NULL, 0,
	    "use the store in DIR (default: $AGENTRT_DB, else "
	    "$XDG_DATA_HOME/agentrt)" },
	{ "dot", OPT_DOT, NULL, ART_OPT_TEXT, NULL, "show", 0,
	    "write Graphviz DOT instead" },
	{ "format", OPT_FORMAT, "FORMAT", ART_OPT_WORDS,
	    "ndjson openai anthropic markdown", "export", 0,
	    "ndjson (default), openai, anthropic or markdown" },
	ART_OPT_STANDARD
};

/* The version, and those of the libraries this program links. */
static _Noreturn void
version(void)
{
	char lmdb[32];
	const char *const libs[] = { "libjq", ART_JQ_VERSION, "LMDB",
	    art_store_lmdb_version(lmdb, sizeof(lmdb)), NULL };

	art_opt_version("agentrt-tree", PACKAGE_VERSION, libs);
}

static _Noreturn void
usage(const char *line)
{
	fprintf(stderr, "usage: agentrt-tree %s\n"
	    "Try 'agentrt-tree --help' for more information.\n",
	    line != NULL ? line : "[-d DIR] COMMAND SESSION [ARGS]");
	exit(ART_EXIT_USAGE);
}

static int
failed(const struct art_err *err)
{
	art_warn("%s", art_err_is(err, "nomem") ? "out of memory" : err->msg);
	return ART_EXIT_FAIL;
}

/* One NDJSON line; -1 (said on stderr) when the reader is gone. */
static int
emit(jv v)
{
	struct art_err err;

	if (art_ndjson_write(stdout, v, &err) == -1)
		return failed(&err), -1;
	return 0;
}

/* Text as it is; -1 (said on stderr) when the write fails. */
static int
emit_text(const char *s)
{
	if (fputs(s, stdout) == EOF || fflush(stdout) == EOF ||
	    ferror(stdout)) {
		art_warn("write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int
emit_each(jv lines)
{
	int r = 0;

	jv_array_foreach(lines, i, v) {
		if (r == 0)
			r = emit(jv_copy(v));
		jv_free(v);
	}
	jv_free(lines);
	return r == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
}

static const char *store_dir(const char *, char *, size_t);

/* --- the read ------------------------------------------------------- */

/* The id a NODE argument names (NULL: the head), into *id. */
static int
resolve(struct view *v, const char *name, jv *id, struct art_err *err)
{
	if (name == NULL) {
		*id = jv_copy(v->head);
		return 0;
	}
	*id = art_treeview_find(&v->nodes, name, err);
	if (!jv_is_valid(*id))
		return art_err_prefix(err, "session '%s'", v->sid);
	return 0;
}

static int
read_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct view *v = ctx;
	jv s = art_session_get(t, v->sid, err), id;
	const char *p;
	int i;

	if (!jv_is_valid(s))
		return -1;
	v->head = art_json_field(&s, "head");
	jv_free(s);
	if (!jv_is_valid(v->nodes = art_tree_nodes(t, v->sid, err)))
		return -1;
	for (i = 0; i < v->npaths; i++) {
		if (resolve(v, v->names[i], &id, err) == -1)
			return -1;
		p = jv_get_kind(id) == JV_KIND_STRING ? jv_string_value(id) :
		    NULL;
		v->ids[i] = art_tree_path_ids(t, v->sid, p, err);
		v->paths[i] = jv_is_valid(v->ids[i]) ?
		    art_tree_path(t, v->sid, p, err) : jv_invalid();
		jv_free(id);
		if (!jv_is_valid(v->paths[i]))
			return -1;
	}
	return 0;
}

static void
view_release(struct view *v)
{
	int i;

	jv_free(v->head);
	jv_free(v->nodes);
	for (i = 0; i < 2; i++) {
		jv_free(v->ids[i]);
		jv_free(v->paths[i]);
	}
}

/* --- the commands ----------------------------------------------------- */

/*
 * The session's last seq on the first read; the payloads of the events
 * after it on the second.
 */
struct last {
	const char	*sid;
	int64_t		 seq;		/* -1: not read yet */
	jv		 events;
};

static int
last_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct last *l = ctx;
	jv all;

	if (l->seq < 0) {
		l->seq = art_log_last_seq(t, l->sid, err);
		l->events = jv_array();
		return l->seq < 0 ? -1 : 0;
	}
	all = art_log_read(t, l->sid, (uint64_t)l->seq, 0, err);
	if (!jv_is_valid(all))
		return -1;
	jv_array_foreach(all, i, ev) {
		l->events = jv_array_append(l->events,
		    art_json_field(&ev, "payload"));
		jv_free(ev);
	}
	jv_free(all);
	return 0;
}

static const char *
head_of(const struct view *v)
{
	return jv_get_kind(v->head) == JV_KIND_STRING ?
	    jv_string_value(v->head) : NULL;
}

static int
cmd_show(const struct opts *o, struct view *v)
{
	jv lines, text;
	int r = 0;

	if (o->dot) {
		text = art_treeview_dot(&v->nodes, &v->ids[0], v->sid,
		    head_of(v));
		r = emit_text(jv_string_value(text));
		jv_free(text);
		return r == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
	}
	lines = art_treeview_lines(&v->nodes, head_of(v));
	jv_array_foreach(lines, i, line) {
		if (r == 0)
			r = emit_text(jv_string_value(line));
		if (r == 0)
			r = emit_text("\n");
		jv_free(line);
	}
	jv_free(lines);
	return r == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
}

static int
cmd_path(const struct opts *o, struct view *v)
{
	(void)o;
	return emit_each(jv_copy(v->paths[0]));
}

static int
cmd_branches(const struct opts *o, struct view *v)
{
	(void)o;
	return emit_each(art_treeview_branches(&v->nodes, head_of(v)));
}

static int
cmd_diff(const struct opts *o, struct view *v)
{
	(void)o;
	return emit_each(art_treeview_diff(&v->paths[0], &v->paths[1]));
}

static int
cmd_export(const struct opts *o, struct view *v)
{
	struct art_err err;
	jv out;
	int r;

	if (strcmp(o->format, "ndjson") == 0)
		return emit_each(jv_copy(v->paths[0]));
	out = art_treeview_export(&v->paths[0], o->format, &err);
	if (!jv_is_valid(out)) {
		art_warn("export session '%s' as %s: %s", v->sid, o->format,
		    err.msg);
		return ART_EXIT_FAIL;
	}
	if (jv_get_kind(out) != JV_KIND_STRING)
		return emit(out) == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
	r = emit_text(jv_string_value(out));
	jv_free(out);
	return r == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
}

/*
 * The checkout itself: the engine records head.moved and voids the work
 * off the new path in one write; what it recorded is printed, so a script
 * sees the calls it abandoned.  Nothing at all when NODE is the head.
 */
static int
cmd_checkout(const struct opts *o, struct view *v)
{
	struct art_clock clock;
	struct art_store_opts so = { .clock = &clock, .create = 0 };
	struct art_engine_opts eo = { 0 };
	struct art_engine *e;
	struct art_store *st;
	struct art_ids ids;
	struct art_err err;
	struct last last = { v->sid, -1, jv_null() };
	char buf[4096];
	int n = jv_array_length(jv_copy(v->ids[0]));
	jv node = n > 0 ? jv_array_get(jv_copy(v->ids[0]), n - 1) : jv_null();
	jv events;
	int r;

	if (jv_get_kind(node) != JV_KIND_STRING) {
		jv_free(node);
		art_warn("session '%s' has no messages", v->sid);
		return ART_EXIT_FAIL;
	}
	if (art_clock_init(&clock, getenv("AGENTRT_CLOCK"), &err) == -1 ||
	    art_ids_init(&ids, &clock, getenv("AGENTRT_ID_SEED"), &err) == -1) {
		jv_free(node);
		return failed(&err);
	}
	so.dir = store_dir(o->db, buf, sizeof(buf));
	if (art_store_open(&st, &so, &err) == -1) {
		jv_free(node);
		return failed(&err);
	}
	eo.store = st;
	eo.ids = &ids;
	eo.clock = &clock;
	eo.pid = (long)getpid();
	r = art_store_read(st, last_fn, &last, &err);
	if (r == 0 && (e = art_engine_new(&eo)) == NULL)
		r = art_err_set(&err, "nomem", "out of memory");
	else if (r == 0) {
		r = art_engine_checkout(e, v->sid, jv_string_value(node),
		    &err);
		art_engine_free(e);
	}
	if (r == 0)
		r = art_store_read(st, last_fn, &last, &err);
	events = last.events;
	art_store_close(st);
	jv_free(node);
	if (r == -1) {
		jv_free(events);
		return failed(&err);
	}
	return emit_each(events);
}

static const struct cmd cmds[] = {
	{ "show", cmd_show, "show [--dot] SESSION", "session",
	    "draw the tree, one line per message", 0, 0, 1 },
	{ "path", cmd_path, "path SESSION [NODE]", "session node",
	    "print the messages root to NODE (default: the head) as NDJSON",
	    0, 1, 1 },
	{ "branches", cmd_branches, "branches SESSION", "session",
	    "print the leaves as NDJSON", 0, 0, 0 },
	{ "diff", cmd_diff, "diff SESSION A B", "session node node",
	    "print the common ancestor of A and B and both tails", 2, 2, 2 },
	{ "checkout", cmd_checkout, "checkout SESSION NODE", "session node",
	    "move the head to NODE: the next turn continues from there; "
	    "prints what it recorded as NDJSON", 1, 1, 1 },
	{ "export", cmd_export, "export [--format FORMAT] SESSION", "session",
	    "print the active path as ndjson, openai, anthropic or markdown",
	    0, 0, 1 },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

static _Noreturn void
help(void)
{
	size_t i;

	fputs(
"Usage: agentrt-tree [-d DIR] COMMAND SESSION [ARGS]\n"
"\n"
"Show a session's message tree: its branches, paths and differences;\n"
"move its head.\n"
"\n"
"Commands:\n", stdout);
	for (i = 0; i < NCMDS; i++)
		art_opt_help_cmd(stdout, cmds[i].usage, cmds[i].help, 24);
	fputs(
"\n"
"A NODE is a message id, or a prefix of exactly one.\n"
"\n"
"Options:\n", stdout);
	art_opt_help(stdout, options, 24);
	fputs(
"\n"
"Exit status: 0 success, 1 failure, 2 usage error.\n",
	    stdout);
	art_opt_exit();
}

static const struct cmd *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

/*
 * --completions: the options (those command context takes, if given),
 * then the commands.
 */
static _Noreturn void
completions(const char *context)
{
	size_t i;

	if (context != NULL && find_cmd(context) == NULL) {
		art_warn("unknown command '%s'", context);
		usage(NULL);
	}
	art_opt_complete(stdout, options, context);
	for (i = 0; i < NCMDS && context == NULL; i++)
		art_opt_complete_cmd(stdout, cmds[i].name, cmds[i].operands,
		    cmds[i].help);
	art_opt_exit();
}


/* -d, else $AGENTRT_DB, else $XDG_DATA_HOME/agentrt, else ~/.local/share. */
static const char *
store_dir(const char *db, char *buf, size_t n)
{
	struct art_err err;
	const char *dir = art_store_find_dir(db, getenv("AGENTRT_DB"),
	    getenv("XDG_DATA_HOME"), getenv("HOME"), buf, n, &err);

	if (dir == NULL)
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	return dir;
}

static void
check_format(const char *f)
{
	if (strcmp(f, "ndjson") != 0 && strcmp(f, "openai") != 0 &&
	    strcmp(f, "anthropic") != 0 && strcmp(f, "markdown") != 0)
		art_die(ART_EXIT_USAGE, "bad --format '%s': use ndjson, "
		    "openai, anthropic or markdown", f);
}

/*
 * Reads the view in one read transaction.  The store is never made: with
 * none, every session is unknown, as agentrt-session show says.
 */
static int
load(const struct opts *o, struct view *v)
{
	struct art_clock clock;
	struct art_store_opts so = { .clock = &clock, .create = 0 };
	struct art_store *st;
	struct art_err err;
	char buf[4096];
	int r;

	if (art_clock_init(&clock, NULL, &err) == -1)
		return failed(&err);
	so.dir = store_dir(o->db, buf, sizeof(buf));
	if (art_store_open(&st, &so, &err) == -1) {
		if (art_err_is(&err, "no_store"))
			art_die(ART_EXIT_FAIL, "no session '%s'", v->sid);
		return failed(&err);
	}
	r = art_store_read(st, read_fn, v, &err);
	art_store_close(st);
	return r == -1 ? failed(&err) : ART_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	struct opts o = { .format = NULL };
	struct view v = { .head = jv_null(), .nodes = jv_null(),
	    .ids = { jv_null(), jv_null() },
	    .paths = { jv_null(), jv_null() } };
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	const struct cmd *c;
	int ch, status;

	art_diag_init(argv[0]);
	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, "", NULL, shortopts, sizeof(shortopts));
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case 'd': o.db = optarg; break;
		case OPT_DOT: o.dot = true; break;
		case OPT_FORMAT: o.format = optarg; break;
		case 'h': help();
		case 'V': version();
		case ART_OPT_COMPLETIONS: completions(argv[optind]);
		default: usage(NULL);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage(NULL);
	if ((c = find_cmd(argv[0])) == NULL) {
		art_warn("unknown command '%s'", argv[0]);
		usage(NULL);
	}
	if (argc < 2 + c->min_args || argc > 2 + c->max_args ||
	    (o.dot && !art_opt_takes(art_opt_find(options, OPT_DOT),
	    c->name)) || (o.format != NULL &&
	    !art_opt_takes(art_opt_find(options, OPT_FORMAT), c->name)))
		usage(c->usage);
	if (o.format == NULL)
		o.format = "ndjson";
	check_format(o.format);
	v.sid = argv[1];
	v.names[0] = argc > 2 ? argv[2] : NULL;
	v.names[1] = argc > 3 ? argv[3] : NULL;
	v.npaths = c->npaths;
	if ((status = load(&o, &v)) == ART_EXIT_OK)
		status = c->run(&o, &v);
	view_release(&v);
	if (status == ART_EXIT_OK && (fflush(stdout) == EOF || ferror(stdout)))
		art_die(ART_EXIT_FAIL, "write: %s", strerror(errno));
	return status;
}
