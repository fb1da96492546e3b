/* session-loop.c - what run and serve share: the engine on a ring
 *
 * Both poll stdin and stdout and never block writing: what the ring
 * will not take yet waits in an art_outq while the loop keeps reading.
 * This file is the ring's plumbing both loops use: setting it up, the
 * agents the engine loads, writing what the engine made, and --events.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "diag.h"
#include "engine.h"
#include "evtext.h"
#include "tree.h"
#include "json.h"
#include "ndjson.h"
#include "outq.h"
#include "session.h"

#include "session-loop.h"

volatile sig_atomic_t loop_stop_signal;

static jv
load_agent(void *ctx, const char *name, struct art_err *err)
{
	struct agents *a = ctx;
	jv config = art_agent_load(a->dirs, a->n, name, err), notes;

	if (jv_is_valid(config))
		config = art_agent_declare_tools(a->tools, name, config, err);
	if (jv_is_valid(config))
		config = art_agent_describe_sub_agents(a->dirs, a->n, config);
	if (!jv_is_valid(config) || a->warned)
		return config;
	/*
	 * Keys nothing reads (a typo) and what the tool schemas will not
	 * check, said once per run.
	 */
	a->warned = 1;
	notes = jv_array_concat(art_agent_key_notes(&config),
	    art_agent_schema_notes(&config));
	jv_array_foreach(notes, i, n) {
		art_warn("agent '%s': %s", name, jv_string_value(n));
		jv_free(n);
		(void)i;
	}
	jv_free(notes);
	return config;
}

/* --agents and --tools, and the environment, as every command looks. */
static void
find_agents(struct agents *a, const struct opts *o)
{
	struct art_err err;

	a->dirs = art_agent_dirs(o->agent_dirs, (size_t)o->nagent_dirs,
	    getenv("AGENTRT_AGENTS"), getenv("XDG_CONFIG_HOME"),
	    getenv("HOME"), &a->n, &err);
	a->tools = art_agent_tool_dirs(o->tool_dirs, (size_t)o->ntool_dirs,
	    getenv("AGENTRT_TOOLS"), &err);
	if (a->dirs == NULL || a->tools == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
}

/*
 * An input the engine refused (a message on a parked branch, a resume of
 * no open interrupt, an answer that does not fit), and a turn a limit or
 * the security pipeline ended, are said on stderr too:
 * the one running the ring should not need --events to see why.
 */
static void
say_refusal(const jv *e)
{
	static const char *const codes[] = { "interrupted", "no_interrupt",
	    "bad_input", "turn_already_active", "agent_mismatch", NULL };
	const char *type = art_json_str(e, "type"), *code = art_json_str(e,
	    "code"), *msg = art_json_str(e, "message");
	int i;

	/* A turn a limit or the security pipeline ended says so too. */
	if (type != NULL && strcmp(type, "completion") == 0 && code != NULL) {
		msg = art_json_str(e, "error");
		/* A missing stage's words name it: they are the news. */
		if (strcmp(code, "no_stage") == 0 && msg != NULL)
			art_warn("%s", msg);
		else
			art_warn("turn failed (%s): %s", code, msg != NULL ?
			    msg : code);
		return;
	}
	if (type == NULL || strcmp(type, "error") != 0 || code == NULL)
		return;
	for (i = 0; codes[i] != NULL; i++)
		if (strcmp(codes[i], code) == 0)
			art_warn("%s: %s", code, msg != NULL ? msg : "refused");
}

int
loop_write_event(struct ring *r, jv e, struct art_err *err)
{
	struct art_buf b = ART_BUF_INIT;
	int rc;

	if (r->text == NULL && r->agui == NULL)
		return art_ndjson_write(r->events, e, err);
	rc = r->agui != NULL ? art_agui_event(r->agui, &e, &b) :
	    art_evtext_event(r->text, &e, &b, &b);
	jv_free(e);
	if (rc == -1)
		rc = art_err_set(err, "nomem", "out of memory");
	else if ((b.len > 0 && fwrite(b.p, 1, b.len, r->events) != b.len) ||
	    fflush(r->events) == EOF)
		rc = art_err_set(err, "io", "%s", strerror(errno));
	art_buf_release(&b);
	return rc;
}

void
loop_touch(struct ring *r, const char *sid)
{
	if (sid != NULL && jv_get_kind(r->touched) == JV_KIND_OBJECT)
		r->touched = jv_object_set(r->touched, jv_string(sid),
		    jv_true());
}

int
loop_drain(struct ring *r)
{
	struct art_err err;
	jv out = art_engine_output(r->engine), ev = art_engine_events(r->engine);
	int failed = 0;

	jv_array_foreach(out, i, line) {
		/* A line the engine made as text already (a model request). */
		if (!failed && jv_get_kind(line) == JV_KIND_STRING) {
			if (art_outq_push_raw(r->out, jv_string_value(line),
			    (size_t)jv_string_length_bytes(jv_copy(line)),
			    &err) == -1 || art_outq_push_raw(r->out, "\n", 1,
			    &err) == -1) {
				if (!loop_stop_signal)	/* a stage died of it */
					art_warn("write to the ring: %s",
					    err.msg);
				failed = 1;
			}
			jv_free(line);
		} else if (!failed && art_outq_push(r->out, line, &err) == -1) {
			if (!loop_stop_signal)
				art_warn("write to the ring: %s", err.msg);
			failed = 1;
		} else if (failed)
			jv_free(line);
	}
	jv_free(out);
	jv_array_foreach(ev, i, e) {
		say_refusal(&e);
		if (jv_get_kind(r->touched) == JV_KIND_OBJECT)
			loop_touch(r, art_json_str(&e, "session_id"));
		if (r->events != NULL && loop_write_event(r, e, &err) == -1) {
			art_warn("--events: a write failed: %s; no more events "
			    "are written", err.msg);
			snprintf(r->events_lost, sizeof(r->events_lost), "%s",
			    err.msg);
			fclose(r->events);
			r->events = NULL;
		} else if (r->events == NULL)
			jv_free(e);
	}
	jv_free(ev);
	return failed ? -1 : 0;
}

static void
on_stop(int sig)
{
	loop_stop_signal = sig;
}

/*
 * SIGINT (Ctrl-C) and SIGTERM end the run between steps, never inside a
 * transaction; without SA_RESTART they wake the poll.
 */
static void
catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int
loop_poll_timeout(struct ring *r)
{
	int64_t wake = art_engine_wake(r->engine), now;

	if (wake < 0)
		return -1;
	now = art_clock_now_ms(r->clock);
	if (wake <= now)
		return 0;
	return wake - now > 60000 ? 60000 : (int)(wake - now);
}

static FILE *
open_events(const char *path)
{
	FILE *f;

	if (path == NULL)
		return NULL;
	if ((f = fopen(path, "a")) == NULL)
		art_die(ART_EXIT_FAIL, "open events '%s': %s", path,
		    strerror(errno));
	return f;
}

static int
agent_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct ring *r = ctx;
	jv s = art_session_get(t, r->agent, err);
	const char *agent = jv_is_valid(s) ? art_json_str(&s, "agent_id") :
	    NULL;

	snprintf(r->agent, sizeof(r->agent), "%s", agent != NULL ? agent :
	    "sub-agent");
	jv_free(s);
	return 0;
}

/* The agent of sub-agent session sid, for the text's "[alpha] ". */
static const char *
agent_of(void *ctx, const char *sid)
{
	struct ring *r = ctx;
	struct art_err err;

	snprintf(r->agent, sizeof(r->agent), "%s", sid);
	if (art_store_read(r->store, agent_fn, r, &err) == -1)
		return NULL;
	return r->agent;
}

/*
 * --events-format text, or none given and the file a terminal: the
 * events drawn as agentrt-shell draws a turn (lib/evtext), coloured on
 * a terminal unless $NO_COLOR.  Refusals and failed turns are left out
 * when the file is our stderr, which says them already.
 */
static struct art_evtext *
events_text(struct ring *r, const char *format)
{
	struct art_evtext_opts eo = { .show = ART_EVTEXT_TEXT |
	    ART_EVTEXT_TOOLS | ART_EVTEXT_USER | ART_EVTEXT_USAGE |
	    ART_EVTEXT_PARKED, .agent_of = agent_of, .ctx = r };
	struct art_evtext *t;
	struct winsize ws;
	struct stat ev, er;
	const char *nc = getenv("NO_COLOR");
	int fd, tty;

	if (r->events == NULL)
		return NULL;
	fd = fileno(r->events);
	tty = isatty(fd);
	if (format != NULL ? strcmp(format, "text") != 0 : !tty)
		return NULL;
	eo.color = tty && (nc == NULL || *nc == '\0');
	if (tty && ioctl(fd, TIOCGWINSZ, &ws) == 0)
		eo.width = ws.ws_col;
	if (fstat(fd, &ev) == -1 || fstat(STDERR_FILENO, &er) == -1 ||
	    ev.st_dev != er.st_dev || ev.st_ino != er.st_ino)
		eo.show |= ART_EVTEXT_REFUSALS | ART_EVTEXT_ENDED;
	if ((t = art_evtext_new(&eo)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	return t;
}

struct path_ctx {
	const char	*sid, *id;
	jv		 path;
};

static int
path_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct path_ctx *p = ctx;

	p->path = art_tree_path(t, p->sid, p->id, err);
	return jv_is_valid(p->path) ? 0 : -1;
}

/* The messages root..id of session sid, for ag-ui's MESSAGES_SNAPSHOT. */
static jv
path_of(void *ctx, const char *sid, const char *id)
{
	struct ring *r = ctx;
	struct path_ctx p = { sid, id, jv_invalid() };
	struct art_err err;

	if (art_store_read(r->store, path_fn, &p, &err) == -1) {
		jv_free(p.path);
		return jv_invalid();
	}
	return p.path;
}

/* --events-format ag-ui: the events as AG-UI's (lib/agui). */
static struct art_agui *
events_agui(struct ring *r, const char *format)
{
	struct art_agui_opts ao = { path_of, r };
	struct art_agui *t;

	if (r->events == NULL || format == NULL || strcmp(format, "ag-ui") != 0)
		return NULL;
	if ((t = art_agui_new(&ao)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	return t;
}

/* Ends a streamed line the run left open; ends an AG-UI run left open. */
static void
close_text(struct ring *r, int status)
{
	struct art_buf b = ART_BUF_INIT;
	char why[64];
	const char *failed = NULL;

	if (r->text != NULL && r->events != NULL &&
	    art_evtext_break(r->text, &b) == 0 && b.len > 0)
		fputs(b.p, r->events);
	if (status != 0 && status != 3) {
		snprintf(why, sizeof(why), "agentrt-session failed (exit "
		    "status %d)", status);
		failed = r->failed != NULL ? r->failed : why;
	}
	if (r->agui != NULL && r->events != NULL &&
	    art_agui_end(r->agui, failed, &b) == 0 && b.len > 0)
		fwrite(b.p, 1, b.len, r->events);
	art_buf_release(&b);
	art_evtext_free(r->text);
	art_agui_free(r->agui);
}

/* $AGENTRT_SYNC: "effects" (the default) or "always". */
static bool
sync_always(void)
{
	const char *v = getenv("AGENTRT_SYNC");

	if (v == NULL || *v == '\0' || strcmp(v, "effects") == 0)
		return false;
	if (strcmp(v, "always") == 0)
		return true;
	art_die(ART_EXIT_USAGE, "bad AGENTRT_SYNC '%s': use effects or always",
	    v);
}

void
loop_open(struct ring *r, struct env *e, const struct opts *o)
{
	struct art_engine_opts eo = { e->store, &e->ids, &e->clock,
	    load_agent, &r->agents, (long)getpid(), false };
	int fl;

	r->clock = &e->clock;
	r->store = e->store;
	signal(SIGPIPE, SIG_IGN);
	catch_stop();
	eo.sync_always = sync_always();
	find_agents(&r->agents, o);
	r->events = open_events(o->events);
	r->agui = events_agui(r, o->events_format);
	if (r->agui == NULL)
		r->text = events_text(r, o->events_format);
	if ((r->engine = art_engine_new(&eo)) == NULL ||
	    (r->out = art_outq_new(STDOUT_FILENO)) == NULL ||
	    (r->in = art_ndjson_reader_new(STDIN_FILENO, "<stdin>",
	    o->max_line, ART_NDJSON_REQUIRE_TYPE)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	if ((fl = fcntl(STDIN_FILENO, F_GETFL)) != -1)
		fcntl(STDIN_FILENO, F_SETFL, fl | O_NONBLOCK);
}

int
loop_close(struct ring *r, int status)
{
	int rc = 0;

	close_text(r, status);
	/* What was buffered last goes now: a failure is said. */
	if (r->events != NULL) {
		int bad = ferror(r->events);

		if (fclose(r->events) == EOF || bad) {
			art_warn("--events: the last events were not written: "
			    "%s", strerror(errno));
			rc = -1;
		}
	}
	art_ndjson_reader_free(r->in);
	art_outq_free(r->out);
	art_engine_free(r->engine);
	free(r->agents.dirs);
	free(r->agents.tools);
	return rc;
}

void
loop_refuse_terminal(const char *cmd, bool in)
{
	const char *which = isatty(STDOUT_FILENO) ? "stdout" :
	    in && isatty(STDIN_FILENO) ? "stdin" : NULL;

	if (which != NULL)
		art_die(ART_EXIT_USAGE, "%s is a terminal, not a ring: run it "
		    "last in one: mkfifo ring; agentrt-decide <ring | "
		    "agentrt-llm | agentrt-tool | agentrt-session %s >ring "
		    "(see agentrt-session(1))", which, cmd);
}
