/* session-replay.c - agentrt-session replay: run a recording again, offline
 *
 * From an export it makes what the ring's stages replay: a cassette of
 * every model call's request and answer (agentrt-llm --replay), a tape of
 * every tool call's arguments and answer (agentrt-tool --replay), and the
 * agent files as the recording used them.  Then it sends the recording's
 * client inputs, in order, to a fresh session, one ring each, and
 * compares what the new session did with what the recording did: the
 * model calls it asked for, the tool calls, the messages and how each
 * turn ended.  The first difference is the divergence it reports.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jv.h>

#include "cassette.h"
#include "diag.h"
#include "err.h"
#include "ids.h"
#include "json.h"
#include "request.h"
#include "log.h"
#include "ndjson.h"
#include "session.h"
#include "tooltape.h"

#include "session-cmd.h"

/* What replaying one recording needs. */
struct replay {
	struct env	*env;
	const struct opts *o;
	char		 dir[PATH_MAX - 64];	/* the scratch directory */
	char		 cassette[PATH_MAX];
	char		 tape[PATH_MAX];
	char		 agents[PATH_MAX];
	char		 bindir[PATH_MAX];	/* where we were run from */
	char		 sid[ART_ID_BUFSZ];	/* the new session */
	const char	*recorded;		/* the recording's root */
	const char	*agent;
};

/* --- what the recording holds ------------------------------------------ */

/* The events of session sid among the lines, in order. */
static jv
events_of(const jv *lines, const char *sid)
{
	jv out = jv_array();

	jv_array_foreach(*lines, i, l) {
		const char *s = art_json_str(&l, "session_id");

		if (i > 0 && s != NULL && strcmp(s, sid) == 0)
			out = jv_array_append(out, l);
		else
			jv_free(l);
	}
	return out;
}

static int
put_line(int fd, jv line)
{
	jv text = jv_dump_string(line, 0);
	const char *p = jv_string_value(text);
	size_t n = (size_t)jv_string_length_bytes(jv_copy(text)), done = 0;
	ssize_t w;

	while (done < n + 1) {
		w = done < n ? write(fd, p + done, n - done) : write(fd, "\n",
		    1);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1) {
			jv_free(text);
			return -1;
		}
		done += (size_t)w;
	}
	jv_free(text);
	return 0;
}

/*
 * The cassette and the tape: each model call's request with the answer
 * it got, each tool call's arguments with its result or error, in the
 * order they were recorded, of every session in the file.
 */
static int
write_answers(struct replay *r, const jv *lines)
{
	jv asked = jv_object(), p, req, line, ans, args, trig;
	const char *t, *id, *model;
	int llm, tool, bad = 0;

	llm = open(r->cassette, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	tool = open(r->tape, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (llm == -1 || tool == -1) {
		art_warn("replay: write '%s': %s", r->dir, strerror(errno));
		bad = 1;
	}
	jv_array_foreach(*lines, i, l) {
		p = art_json_field(&l, "payload");
		t = art_json_str(&p, "type");
		id = art_json_str(&p, "id");
		jv_free(l);
		if (bad || t == NULL || id == NULL) {
			jv_free(p);
			continue;
		}
		if (strcmp(t, "llm.call.requested") == 0 ||
		    strcmp(t, "tool.call.requested") == 0) {
			asked = jv_object_set(asked, jv_string(id), p);
			continue;
		}
		req = jv_object_get(jv_copy(asked), jv_string(id));
		if (!jv_is_valid(req)) {
			jv_free(req);
			jv_free(p);
			continue;
		}
		line = jv_invalid();
		if (strcmp(t, "llm.call.completed") == 0) {
			jv rq = art_json_field(&req, "request");
			jv resp = art_json_field(&p, "response");
			jv none = jv_null(), deltas = jv_array();
			int stream = 0;

			art_json_get_bool(&req, "stream", 0, &stream, NULL);
			model = art_json_str(&rq, "model");
			line = art_cassette_line(model != NULL ? model : "",
			    &rq, stream, &deltas, &resp, &none);
			jv_free(rq);
			jv_free(resp);
			jv_free(deltas);
		} else if (strcmp(t, "tool.call.completed") == 0 ||
		    strcmp(t, "tool.call.errored") == 0) {
			trig = jv_object_set(jv_object(), jv_string("arguments"),
			    art_json_field(&req, "arguments"));
			args = art_tooltape_args(&trig);
			ans = jv_object_set(jv_copy(p), jv_string("type"),
			    jv_string(strcmp(t, "tool.call.completed") == 0 ?
			    "tool.result" : "tool.error"));
			line = art_tooltape_line(art_json_str(&req, "name"),
			    &args, &ans);
			jv_free(trig);
			jv_free(args);
			jv_free(ans);
		}
		if (jv_is_valid(line) && put_line(strncmp(t, "llm.", 4) == 0 ?
		    llm : tool, line) == -1) {
			art_warn("replay: write '%s': %s", r->dir,
			    strerror(errno));
			bad = 1;
		} else if (!jv_is_valid(line)) {
			jv_free(line);
		}
		jv_free(req);
		jv_free(p);
	}
	jv_free(asked);
	if (llm != -1)
		close(llm);
	if (tool != -1)
		close(tool);
	return bad ? -1 : 0;
}

/* Each session's agent file, as the recording started it. */
static int
write_agents(struct replay *r, const jv *lines)
{
	jv agents = jv_object(), p, tr, file;
	char path[PATH_MAX * 2];
	const char *t, *sid;
	int fd, bad = 0;

	jv_array_foreach(*lines, i, l) {
		p = art_json_field(&l, "payload");
		t = art_json_str(&p, "type");
		sid = art_json_str(&l, "session_id");
		if (t != NULL && sid != NULL && strcmp(t, "session.created") ==
		    0 && art_json_str(&p, "agent_id") != NULL)
			agents = jv_object_set(agents, jv_string(sid),
			    art_json_field(&p, "agent_id"));
		tr = art_json_field(&p, "trigger");
		t = art_json_str(&tr, "type");
		file = art_json_field(&p, "agent_file");
		if (t != NULL && strcmp(t, "session.start") == 0 &&
		    jv_get_kind(file) == JV_KIND_OBJECT && sid != NULL) {
			jv a = jv_object_get(jv_copy(agents), jv_string(sid));

			if (jv_get_kind(a) == JV_KIND_STRING) {
				snprintf(path, sizeof(path), "%s/%s.json",
				    r->agents, jv_string_value(a));
				fd = open(path, O_WRONLY | O_CREAT | O_TRUNC |
				    O_CLOEXEC, 0600);
				if (fd == -1 || put_line(fd, jv_copy(file)) ==
				    -1)
					bad = 1;
				if (fd != -1)
					close(fd);
			}
			jv_free(a);
		}
		jv_free(file);
		jv_free(tr);
		jv_free(p);
		jv_free(l);
	}
	jv_free(agents);
	if (bad)
		art_warn("replay: write '%s': %s", r->agents, strerror(errno));
	return bad ? -1 : 0;
}

/*
 * The client inputs of the root's events, in order: an input line to
 * send, or {"resume": PAYLOAD} for an interrupt resumed.
 */
static jv
client_inputs(const jv *events)
{
	jv out = jv_array(), p, tr;
	const char *t, *tt;

	jv_array_foreach(*events, i, ev) {
		p = art_json_field(&ev, "payload");
		t = art_json_str(&p, "type");
		tr = art_json_field(&p, "trigger");
		tt = art_json_str(&tr, "type");
		if (t != NULL && strcmp(t, "decision.queued") == 0 &&
		    tt != NULL && (strcmp(tt, "client.message") == 0 ||
		    strcmp(tt, "client.messages") == 0 ||
		    strcmp(tt, "client.action") == 0))
			out = jv_array_append(out, jv_copy(tr));
		else if (t != NULL && strcmp(t, "session.interrupt_resumed") ==
		    0)
			out = jv_array_append(out, jv_object_set(jv_object(),
			    jv_string("resume"), art_json_field(&p,
			    "payload")));
		jv_free(tr);
		jv_free(p);
		jv_free(ev);
	}
	return out;
}

/* --- what a session did, to compare ------------------------------------- */

/* v (consumed) without any "id" member, anywhere. */
static jv
without_ids(jv v)
{
	jv out;

	if (jv_get_kind(v) == JV_KIND_ARRAY) {
		out = jv_array();
		jv_array_foreach(v, i, e)
			out = jv_array_append(out, without_ids(e));
		jv_free(v);
		return out;
	}
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		return v;
	out = jv_object();
	jv_object_foreach(v, k, e) {
		if (strcmp(jv_string_value(k), "id") == 0) {
			jv_free(k);
			jv_free(e);
		} else {
			out = jv_object_set(out, k, without_ids(e));
		}
	}
	jv_free(v);
	return out;
}

/*
 * What an event shows of the session's behaviour, or jv_invalid() for
 * an event that shows nothing comparable (ids, times and bookkeeping).
 */
static jv
observed(const jv *ev)
{
	jv p = art_json_field(ev, "payload"), o = jv_invalid(), rq;
	const char *t = art_json_str(&p, "type");

	if (t == NULL)
		;
	else if (strcmp(t, "llm.call.requested") == 0) {
		rq = art_json_field(&p, "request");
		o = jv_object_set(jv_object(), jv_string("model"),
		    art_json_field(&rq, "model"));
		o = jv_object_set(o, jv_string("messages"),
		    art_cassette_messages(art_json_field(&rq, "messages")));
		jv_free(rq);
	} else if (strcmp(t, "tool.call.requested") == 0) {
		o = jv_object_set(jv_object(), jv_string("name"),
		    art_json_field(&p, "name"));
		o = jv_object_set(o, jv_string("arguments"),
		    art_json_field(&p, "arguments"));
	} else if (strcmp(t, "message.new") == 0) {
		o = jv_object_set(jv_object(), jv_string("message"),
		    without_ids(art_json_field(&p, "message")));
	} else if (strcmp(t, "turn.completed") == 0) {
		o = jv_object_set(jv_object(), jv_string("data"),
		    art_json_field(&p, "data"));
		o = jv_object_set(o, jv_string("error"),
		    art_json_field(&p, "error"));
	} else if (strcmp(t, "session.interrupted") == 0) {
		o = jv_object_set(jv_object(), jv_string("reason"),
		    art_json_field(&p, "reason"));
	}
	if (jv_is_valid(o)) {
		o = jv_object_merge(jv_object_set(jv_object(),
		    jv_string("type"), jv_string(t)), o);
		o = jv_object_set(o, jv_string("seq"), art_json_field(ev,
		    "seq"));
	}
	jv_free(p);
	return o;
}

/* The tool_call_id of o when it records a tool message, else NULL. */
static const char *
tool_answer(const jv *o, jv *msg)
{
	const char *t = art_json_str(o, "type"), *role;

	*msg = art_json_field(o, "message");
	role = art_json_str(msg, "role");
	if (t == NULL || strcmp(t, "message.new") != 0 || role == NULL ||
	    strcmp(role, "tool") != 0)
		return NULL;
	return art_json_str(msg, "tool_call_id");
}

/*
 * The observed events of a list of events, in order, but for the answers
 * of parallel calls: they are recorded as they finish, in any order, so
 * each run of tool messages is sorted by tool_call_id (as the cassette's
 * keys sort them in a model call's messages).
 */
static jv
behaviour(const jv *events)
{
	jv out = jv_array(), run = jv_array(), keys = jv_array(), o, msg;
	const char *id;

	jv_array_foreach(*events, i, ev) {
		o = observed(&ev);
		jv_free(ev);
		if (!jv_is_valid(o)) {
			jv_free(o);
			continue;
		}
		if ((id = tool_answer(&o, &msg)) != NULL) {
			keys = jv_array_append(keys, jv_string(id));
			run = jv_array_append(run, o);
			jv_free(msg);
			continue;
		}
		jv_free(msg);
		out = jv_array_concat(out, jv_sort(run, keys));
		run = jv_array();
		keys = jv_array();
		out = jv_array_append(out, o);
	}
	return jv_array_concat(out, jv_sort(run, keys));
}

/* o without its seq: what is compared. */
static jv
unseq(const jv *o)
{
	return jv_object_delete(jv_copy(*o), jv_string("seq"));
}

/*
 * The first place the two differ, as a replay.divergence line, or
 * jv_null() when they agree.
 */
static jv
diverges(const jv *want, const jv *got, const char *sid)
{
	int n = jv_array_length(jv_copy(*want));
	int m = jv_array_length(jv_copy(*got)), i;
	jv a, b, ua, ub, line, ev;
	bool same;

	for (i = 0; i < n || i < m; i++) {
		a = i < n ? jv_array_get(jv_copy(*want), i) : jv_null();
		b = i < m ? jv_array_get(jv_copy(*got), i) : jv_null();
		ua = jv_get_kind(a) == JV_KIND_NULL ? jv_null() : unseq(&a);
		ub = jv_get_kind(b) == JV_KIND_NULL ? jv_null() : unseq(&b);
		same = jv_equal(jv_copy(ua), jv_copy(ub));
		if (!same) {
			ev = jv_object_set(jv_object(), jv_string("index"),
			    jv_number(i));
			ev = jv_object_set(ev, jv_string("type"),
			    art_json_field(i < n ? &a : &b, "type"));
			ev = jv_object_set(ev, jv_string("expected_seq"),
			    art_json_field(&a, "seq"));
			ev = jv_object_set(ev, jv_string("actual_seq"),
			    art_json_field(&b, "seq"));
			line = jv_object_set(jv_object(), jv_string("type"),
			    jv_string("replay.divergence"));
			line = jv_object_set(line, jv_string("session"),
			    jv_string(sid));
			line = jv_object_set(line, jv_string("event"), ev);
			line = jv_object_set(line, jv_string("expected"), ua);
			line = jv_object_set(line, jv_string("actual"), ub);
			jv_free(a);
			jv_free(b);
			return line;
		}
		jv_free(ua);
		jv_free(ub);
		jv_free(a);
		jv_free(b);
	}
	return jv_null();
}

/* --- running the ring ---------------------------------------------------- */

/* The sibling binary name: next to us when it is there, else on PATH. */
static const char *
sibling(const struct replay *r, const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", r->bindir, name);
	return r->bindir[0] != '\0' && access(buf, X_OK) == 0 ? buf : name;
}

static void
exec_stage(const char *const *argv, int in, int out)
{
	signal(SIGPIPE, SIG_DFL);
	if (dup2(in, STDIN_FILENO) == -1 || dup2(out, STDOUT_FILENO) == -1)
		_exit(127);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "agentrt-session: replay: run %s: %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

/*
 * One ring: decide | llm --replay | tool --replay | session run ARGS,
 * closed through a fifo.  The status of the session stage, or -1.
 */
static int
ring(struct replay *r, const char *const *run_args)
{
	char fifo[PATH_MAX + 8], b[4][PATH_MAX + 32], db[PATH_MAX];
	const char *argv[4][32];
	int p1[2], p2[2], p3[2], rd, wr, st, status = -1, i, k;
	pid_t pid[4];

	snprintf(fifo, sizeof(fifo), "%s/ring", r->dir);
	unlink(fifo);
	if (mkfifo(fifo, 0600) == -1)
		return -1;
	k = 0;
	argv[0][k++] = sibling(r, "agentrt-decide", b[0], sizeof(b[0]));
	if (r->o->policy != NULL) {
		argv[0][k++] = "-f";
		argv[0][k++] = r->o->policy;
	}
	argv[0][k] = NULL;
	argv[1][0] = sibling(r, "agentrt-llm", b[1], sizeof(b[1]));
	argv[1][1] = "--replay", argv[1][2] = r->cassette, argv[1][3] = NULL;
	argv[2][0] = sibling(r, "agentrt-tool", b[2], sizeof(b[2]));
	argv[2][1] = "--replay", argv[2][2] = r->tape, argv[2][3] = NULL;
	k = 0;
	argv[3][k++] = sibling(r, "agentrt-session", b[3], sizeof(b[3]));
	snprintf(db, sizeof(db), "%s", art_store_dir(r->env->store));
	argv[3][k++] = "-d", argv[3][k++] = db, argv[3][k++] = "run";
	for (i = 0; run_args[i] != NULL && k < 30; i++)
		argv[3][k++] = run_args[i];
	argv[3][k] = NULL;
	if (pipe(p1) == -1 || pipe(p2) == -1 || pipe(p3) == -1)
		return -1;
	fflush(stdout);
	fflush(stderr);
	if ((pid[0] = fork()) == 0) {
		if ((rd = open(fifo, O_RDONLY)) == -1)
			_exit(127);
		close(p1[0]), close(p2[0]), close(p2[1]);
		close(p3[0]), close(p3[1]);
		exec_stage(argv[0], rd, p1[1]);
	}
	if ((pid[1] = fork()) == 0) {
		close(p1[1]), close(p2[0]), close(p3[0]), close(p3[1]);
		exec_stage(argv[1], p1[0], p2[1]);
	}
	if ((pid[2] = fork()) == 0) {
		close(p1[0]), close(p1[1]), close(p2[1]), close(p3[0]);
		exec_stage(argv[2], p2[0], p3[1]);
	}
	if ((pid[3] = fork()) == 0) {
		close(p1[0]), close(p1[1]), close(p2[0]), close(p2[1]);
		close(p3[1]);
		if ((wr = open(fifo, O_WRONLY)) == -1)
			_exit(127);
		exec_stage(argv[3], p3[0], wr);
	}
	close(p1[0]), close(p1[1]), close(p2[0]), close(p2[1]);
	close(p3[0]), close(p3[1]);
	for (i = 0; i < 4; i++) {
		if (pid[i] == -1)
			continue;
		while (waitpid(pid[i], &st, 0) == -1 && errno == EINTR)
			;
		if (i == 3 && WIFEXITED(st))
			status = WEXITSTATUS(st);
	}
	unlink(fifo);
	return status;
}

/* The new session's first open interrupt, or NULL. */
struct open_intr {
	const char	*sid;
	char		 id[ART_ID_BUFSZ + 64];
};

static int
open_intr_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct open_intr *x = ctx;
	jv s = art_session_get(t, x->sid, err), all;

	x->id[0] = '\0';
	if (!jv_is_valid(s))
		return -1;
	all = art_json_field(&s, "interrupts");
	if (jv_get_kind(all) == JV_KIND_OBJECT) {
		jv_object_foreach(all, k, v) {
			if (x->id[0] == '\0')
				snprintf(x->id, sizeof(x->id), "%s",
				    jv_string_value(k));
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(all);
	jv_free(s);
	return 0;
}

/* Sends one recorded input through a ring; -1 when it could not run. */
static int
send_input(struct replay *r, const jv *in, bool first)
{
	struct open_intr x = { r->sid, "" };
	struct art_err err;
	const char *args[24];
	jv text = jv_invalid(), payload = art_json_field(in, "resume");
	int k = 0, st, i;

	args[k++] = "-s", args[k++] = r->sid;
	if (first)
		args[k++] = "-a", args[k++] = r->agent;
	for (i = 0; i < r->o->nagent_dirs && i < 4; i++)
		args[k++] = "--agents", args[k++] = r->o->agent_dirs[i];
	args[k++] = "--agents", args[k++] = r->agents;
	if (jv_is_valid(payload) && jv_get_kind(payload) != JV_KIND_NULL) {
		if (art_store_read(r->env->store, open_intr_fn, &x, &err) ==
		    -1 || x.id[0] == '\0') {
			jv_free(payload);
			return 1;	/* nothing to resume: the compare says */
		}
		text = jv_dump_string(payload, 0);
		args[k++] = "--resume", args[k++] = x.id;
		args[k++] = "--payload", args[k++] = jv_string_value(text);
	} else {
		jv_free(payload);
		text = jv_dump_string(jv_copy(*in), 0);
		args[k++] = "--input", args[k++] = jv_string_value(text);
	}
	args[k] = NULL;
	st = ring(r, args);
	jv_free(text);
	if (st == -1 || st == 2) {
		art_warn("replay: the ring could not run the recording's "
		    "input");
		return -1;
	}
	return 0;
}

/* --- the command -------------------------------------------------------- */

struct read_events {
	const char	*sid;
	jv		 events;
};

static int
read_events_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct read_events *x = ctx;

	x->events = art_request_log_read(t, x->sid, 0, 0, err);
	return jv_is_valid(x->events) ? 0 : -1;
}

/* The scratch directory and what this file put in it. */
static void
cleanup(struct replay *r)
{
	char path[PATH_MAX * 2];
	struct dirent *d;
	DIR *dir;

	unlink(r->cassette);
	unlink(r->tape);
	if ((dir = opendir(r->agents)) != NULL) {
		while ((d = readdir(dir)) != NULL) {
			if (d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", r->agents,
			    d->d_name);
			unlink(path);
		}
		closedir(dir);
	}
	rmdir(r->agents);
	if (rmdir(r->dir) == -1)
		art_warn("replay: remove '%s': %s", r->dir, strerror(errno));
}

static void
find_bindir(struct replay *r)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	r->bindir[0] = '\0';
	if (n <= 0)
		return;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL) {
		*slash = '\0';
		snprintf(r->bindir, sizeof(r->bindir), "%s", self);
	}
}

int
session_replay(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct replay r = { .env = e, .o = o };
	struct read_events x = { NULL, jv_invalid() };
	struct art_err err;
	const char *tmp = getenv("TMPDIR");
	jv lines, head, rec, inputs, want, got, events, div;
	char tail[7];
	int status = ART_EXIT_OK, n;

	/* Said before any ring runs: decide would only die in it. */
	if (o->policy != NULL && access(o->policy, R_OK) == -1)
		art_die(ART_EXIT_USAGE, "replay: --policy '%s': %s", o->policy,
		    strerror(errno));

	if (!jv_is_valid(lines = session_read_export(argc > 0 ? argv[0] :
	    NULL, "nothing replayed")))
		return ART_EXIT_FAIL;
	head = jv_array_get(jv_copy(lines), 0);
	r.recorded = art_json_str(&head, "session");
	rec = events_of(&lines, r.recorded);
	{
		jv first = jv_array_get(jv_copy(rec), 0);
		jv p = art_json_field(&first, "payload");

		r.agent = art_json_str(&p, "agent_id") != NULL ?
		    strdup(art_json_str(&p, "agent_id")) : NULL;
		jv_free(p);
		jv_free(first);
	}
	if (r.agent == NULL) {
		art_warn("replay: the recording names no agent");
		status = ART_EXIT_FAIL;
		goto out;
	}
	/* mkdtemp(3) makes the last six characters, which must be 'X'. */
	memset(tail, 'X', sizeof(tail) - 1);
	tail[sizeof(tail) - 1] = '\0';
	n = snprintf(r.dir, sizeof(r.dir), "%s/agentrt-replay.%s",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp", tail);
	if (n < 0 || (size_t)n >= sizeof(r.dir) || mkdtemp(r.dir) == NULL) {
		art_warn("replay: make a scratch directory: %s",
		    strerror(errno));
		status = ART_EXIT_FAIL;
		goto out;
	}
	snprintf(r.cassette, sizeof(r.cassette), "%s/models.ndjson", r.dir);
	snprintf(r.tape, sizeof(r.tape), "%s/tools.ndjson", r.dir);
	snprintf(r.agents, sizeof(r.agents), "%s/agents", r.dir);
	find_bindir(&r);
	if (mkdir(r.agents, 0700) == -1 || write_answers(&r, &lines) == -1 ||
	    write_agents(&r, &lines) == -1) {
		status = ART_EXIT_FAIL;
		goto clean;
	}
	if (art_ids_v7(&e->ids, r.sid) == -1) {
		art_warn("replay: cannot mint a session id");
		status = ART_EXIT_FAIL;
		goto clean;
	}
	inputs = client_inputs(&rec);
	jv_array_foreach(inputs, i, in) {
		if (status == ART_EXIT_OK && send_input(&r, &in, i == 0) == -1)
			status = ART_EXIT_FAIL;
		jv_free(in);
	}
	jv_free(inputs);
	if (status != ART_EXIT_OK)
		goto clean;
	x.sid = r.sid;
	if (art_store_read(e->store, read_events_fn, &x, &err) == -1) {
		art_warn("%s", err.msg);
		status = ART_EXIT_FAIL;
		goto clean;
	}
	events = x.events;
	want = behaviour(&rec);
	got = behaviour(&events);
	jv_free(events);
	div = diverges(&want, &got, r.sid);
	if (jv_get_kind(div) == JV_KIND_NULL) {
		jv_free(div);
		div = jv_object_set(jv_object(), jv_string("type"),
		    jv_string("replay.passed"));
		div = jv_object_set(div, jv_string("session"),
		    jv_string(r.sid));
		div = jv_object_set(div, jv_string("recorded"),
		    jv_string(r.recorded));
		div = jv_object_set(div, jv_string("events"),
		    jv_number(jv_array_length(jv_copy(want))));
	} else {
		status = ART_EXIT_FAIL;
	}
	jv_free(want);
	jv_free(got);
	if (art_ndjson_write(stdout, div, &err) == -1) {
		art_warn("%s", err.msg);
		status = ART_EXIT_FAIL;
	}
clean:
	cleanup(&r);
out:
	free((char *)r.agent);
	jv_free(rec);
	jv_free(head);
	jv_free(lines);
	return status;
}
