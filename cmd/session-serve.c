/* session-serve.c - agentrt-session serve: one engine for many sessions
 *
 * stdin brings bus lines for any sessions; stdout takes the ring lines
 * the engine makes, as run's loop does (session-loop.c).  A line for a
 * session not driven places it first (art_engine_place), one that
 * cannot be placed is refused on stderr and --events only (stdout goes
 * to the workers, whose pass-through would bring it back), and a
 * session with nothing in flight is let go.  serve never ends because
 * it is idle; at EOF, SIGINT or SIGTERM it writes what is queued and
 * stops driving, cancelling nothing: the next serve adopts what is in
 * flight.  --acks tells a bus bridge how many lines are taken for good.
 *
 * --clients is a second input, a front end's (agentrt-serve's): its
 * lines are taken as stdin's are, and are not counted by --acks.  Two
 * lines are serve's own: session.cancel {session_id, reason?} cancels a
 * driven session's turn as agentrt-session cancel would, and, on
 * --events, session.idle {session_id, state} says that a session whose
 * events were written, or whose line was taken, has nothing in flight
 * now: its turn completed or failed, or it is parked on an interrupt or
 * on a client's tool.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "engine.h"
#include "json.h"
#include "ndjson.h"
#include "outq.h"

#include "session-cmd.h"
#include "session-loop.h"

/* How long the output may take to drain at the end (ms). */
#define DRAIN_MS	2000

/*
 * --acks: the count of stdin lines taken, written after each commit.
 * The numbers are cumulative, so a full pipe keeps only the latest.
 */
struct acks {
	int		 fd;		/* -1: none, or its reader went */
	size_t		 taken;		/* lines taken for good so far */
	size_t		 sent;		/* the number in buf */
	char		 buf[32];
	size_t		 len, off;	/* buf's bytes, and those written */
};

struct serve {
	struct ring	 r;
	struct acks	 acks;
	struct art_ndjson_reader *clients;	/* --clients, or NULL */
	int		 clients_fd;
	jv		 batch;		/* lines read, not yet committed */
	size_t		 batch_end;	/* the line number of its last */
};

static bool
ack_pending(const struct acks *a)
{
	return a->fd >= 0 && (a->off < a->len || a->sent != a->taken);
}

/* Writes what of the latest count the fifo takes; never blocks. */
static void
ack_flush(struct acks *a)
{
	ssize_t n;

	while (ack_pending(a)) {
		/* Nothing of buf went yet: the latest number replaces it. */
		if (a->off == 0 || a->off == a->len) {
			a->len = (size_t)snprintf(a->buf, sizeof(a->buf),
			    "%zu\n", a->taken);
			a->off = 0;
			a->sent = a->taken;
		}
		n = write(a->fd, a->buf + a->off, a->len - a->off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1) {
			art_warn("write --acks: %s", strerror(errno));
			close(a->fd);
			a->fd = -1;
			return;
		}
		a->off += (size_t)n;
	}
}

static void
ack(struct acks *a, size_t taken)
{
	a->taken = taken;
	ack_flush(a);
}

/* Opens --acks (a fifo: waits for its reader), then non-blocking. */
static int
open_acks(const char *path)
{
	int fd, fl;

	if (path == NULL)
		return -1;
	while ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1 && errno == EINTR
	    && loop_stop_signal == 0)
		;
	if (fd == -1)
		art_die(ART_EXIT_FAIL, "open --acks '%s': %s", path,
		    strerror(errno));
	if ((fl = fcntl(fd, F_GETFL)) != -1)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	return fd;
}

/*
 * The engine could not record a step: nothing of it is in the store,
 * and nothing after the last good count is acked, so the bridge brings
 * it again.  Returns -1.
 */
static int
store_failed(const struct art_err *err)
{
	art_warn("%s", err->msg);
	if (art_err_is(err, "no_space"))
		art_warn("the sessions are as their last commit left them: "
		    "free some space, then start serve again (it adopts what "
		    "is in flight)");
	return -1;
}

/* A refusal's error event on --events: {type, code, message, session_id?}. */
static void
refusal_event(struct serve *s, const char *sid, const struct art_err *why)
{
	struct art_err err;
	jv ev;

	if (s->r.events == NULL)
		return;
	ev = art_json_set(jv_object(), "type", jv_string("error"));
	ev = art_json_set(ev, "code", jv_string(why->code != NULL ?
	    why->code : "refused"));
	ev = art_json_set(ev, "message", jv_string(why->msg));
	if (sid != NULL && art_id_is_valid(sid))
		ev = art_json_set(ev, "session_id", jv_string(sid));
	if (loop_write_event(&s->r, ev, &err) == -1)
		art_warn("write events: %s", err.msg);
}

/*
 * A line refused before the engine: one stderr line naming its type,
 * session and why, and an error event; nothing recorded.
 */
static void
refuse(struct serve *s, const char *type, const char *sid,
    const struct art_err *why)
{
	if (type == NULL)
		type = "a line with no type";
	if (sid != NULL)
		art_warn("refused %s for session '%s': %s", type, sid,
		    why->msg);
	else
		art_warn("refused %s: %s", type, why->msg);
	refusal_event(s, sid, why);
}

/* The lines read so far, in one transaction; then acked and written. */
static int
commit(struct serve *s)
{
	struct art_err err;
	jv lines = s->batch;

	if (jv_array_length(jv_copy(lines)) == 0)
		return 0;
	s->batch = jv_array();
	if (art_engine_input_batch(s->r.engine, NULL, lines, &err) == -1) {
		loop_drain(&s->r);	/* what did commit still goes out */
		return store_failed(&err);
	}
	ack(&s->acks, s->batch_end);
	return loop_drain(&s->r);
}

/*
 * session.cancel (consumed): what is read before it is committed, then
 * the session's turn is cancelled, if it is driven; a cancel the engine
 * refuses is said as a refused line is.
 */
static int
cancel(struct serve *s, jv line, size_t at)
{
	const char *sid = art_json_str(&line, "session_id");
	const char *why = art_json_str(&line, "reason");
	struct art_err err;
	int r = 0;

	if (commit(s) == -1) {
		jv_free(line);
		return -1;
	}
	if (sid == NULL || !art_id_is_valid(sid)) {
		art_err_set(&err, "bad_session", "session.cancel needs a valid "
		    "session_id");
		refuse(s, "session.cancel", NULL, &err);
	} else if (art_engine_drives(s->r.engine, sid) &&
	    art_engine_cancel(s->r.engine, sid, why != NULL ? why :
	    "cancelled", &err) == -1)
		refuse(s, "session.cancel", sid, &err);
	/* Driven or not, its front end hears how it is now. */
	if (sid != NULL && art_id_is_valid(sid))
		loop_touch(&s->r, sid);
	jv_free(line);
	ack(&s->acks, at);
	r = loop_drain(&s->r);
	return r;
}

/*
 * One line (consumed) read, the at'th of stdin's: a line for a session
 * not driven commits what is read before it, then places it, or refuses
 * it (taken then).
 */
static int
take(struct serve *s, jv line, size_t at)
{
	const char *sid = art_json_str(&line, "session_id");
	const char *type = art_json_str(&line, "type");
	struct art_err err;
	int r;

	if (type != NULL && strcmp(type, "session.cancel") == 0)
		return cancel(s, line, at);
	if (!art_engine_drives(s->r.engine, sid)) {
		if (commit(s) == -1) {
			jv_free(line);
			return -1;
		}
		r = art_engine_place(s->r.engine, sid, art_json_str(&line,
		    "type"), art_json_str(&line, "agent_id"), &err);
		if (r == -1 || loop_drain(&s->r) == -1) {
			jv_free(line);
			return r == -1 ? store_failed(&err) : -1;
		}
		if (r == 1) {
			refuse(s, art_json_str(&line, "type"), sid, &err);
			jv_free(line);
			ack(&s->acks, at);
			return 0;
		}
	}
	loop_touch(&s->r, sid);
	s->batch = jv_array_append(s->batch, line);
	s->batch_end = at;
	return 0;
}

/*
 * Reads what stdin has, a batch at a time (one transaction and at most
 * one sync for each: group commit).  A bad line is refused as a line
 * that cannot be placed is: it names no session to record it in.
 */
static int
read_lines(struct serve *s, bool clients)
{
	struct art_ndjson_reader *in = clients ? s->clients : s->r.in;
	struct art_err err;
	enum art_ndjson_status st;
	jv line;
	size_t at;
	int n = 0;

	while (clients ? s->clients != NULL : !s->r.eof) {
		st = art_ndjson_next(in, &line, &err);
		if (st == ART_NDJSON_AGAIN)
			break;
		if (st == ART_NDJSON_EOF || st == ART_NDJSON_IOERR) {
			if (st == ART_NDJSON_IOERR)
				art_warn("%s", err.msg);
			if (!clients) {
				s->r.eof = 1;
				break;
			}
			/* The front end went: stdin goes on. */
			art_ndjson_reader_free(s->clients);
			s->clients = NULL;
			close(s->clients_fd);
			s->clients_fd = -1;
			break;
		}
		/* A line of --clients is not stdin's: the count stays. */
		at = clients ? s->batch_end : art_ndjson_lineno(in);
		if (st == ART_NDJSON_BAD) {
			if (commit(s) == -1)
				return -1;
			art_warn("%s:%zu: %s", clients ? "--clients" :
			    "<stdin>", art_ndjson_lineno(in), err.msg);
			refusal_event(s, NULL, &err);
			ack(&s->acks, at);
			continue;
		}
		if (take(s, line, at) == -1)
			return -1;
		if (++n % RING_BATCH_MAX == 0 && commit(s) == -1)
			return -1;
	}
	return commit(s);
}

/* The store's orphans, driven and recovered as run -s recovers one. */
static int
adopt_orphans(struct serve *s)
{
	struct art_err err;
	jv all = art_engine_orphans(s->r.engine, &err);
	int r = 0;

	if (!jv_is_valid(all))
		return store_failed(&err);
	jv_array_foreach(all, i, sid) {
		if (r == 0 && (r = art_engine_place(s->r.engine,
		    jv_string_value(sid), NULL, NULL, &err)) == 1) {
			art_warn("adopt session '%s': %s", jv_string_value(sid),
			    err.msg);
			r = 0;
		}
		jv_free(sid);
		(void)i;
	}
	jv_free(all);
	if (r == -1)
		return store_failed(&err);
	return loop_drain(&s->r);
}

/*
 * The end (EOF, SIGINT, SIGTERM): what is queued goes out, for DRAIN_MS
 * at most, then the sessions are let go as they are: nothing cancelled.
 */
static int
finish(struct serve *s, int status)
{
	struct pollfd pfd[2];
	struct art_err err;
	int64_t until = art_clock_mono_ms() + DRAIN_MS, left;

	while (status == 0 && (art_outq_pending(s->r.out) > 0 ||
	    ack_pending(&s->acks)) && (left = until - art_clock_mono_ms()) > 0) {
		pfd[0] = (struct pollfd){ art_outq_pending(s->r.out) > 0 ?
		    art_outq_fd(s->r.out) : -1, POLLOUT, 0 };
		pfd[1] = (struct pollfd){ ack_pending(&s->acks) ?
		    s->acks.fd : -1, POLLOUT, 0 };
		if (poll(pfd, 2, (int)left) == -1 && errno != EINTR)
			break;
		if ((pfd[0].revents & (POLLOUT | POLLERR | POLLHUP)) &&
		    art_outq_flush(s->r.out, &err) == -1)
			break;
		if (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP))
			ack_flush(&s->acks);
	}
	if (status == 0 && art_outq_pending(s->r.out) > 0)
		art_warn("%zu bytes for the ring were not written in %d ms",
		    art_outq_pending(s->r.out), DRAIN_MS);
	if (loop_stop_signal != 0 && art_engine_driven(s->r.engine) > 0)
		art_warn("stopped (%s): %d sessions in flight are left as "
		    "recorded, for the next serve to adopt",
		    loop_stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
		    art_engine_driven(s->r.engine));
	if (art_engine_stop(s->r.engine, &err) == -1) {
		art_warn("%s; the sessions it drove stay marked as driven by "
		    "this process until a run or serve takes them over",
		    err.msg);
		status = ART_EXIT_FAIL;
	}
	return status;
}

/* The name session.idle gives a state. */
static const char *
state_name(enum art_engine_state st)
{
	switch (st) {
	case ART_ENGINE_DONE:	return "completed";
	case ART_ENGINE_PARKED:	return "parked";
	default:		return "failed";
	}
}

/*
 * Each session touched since the last call that has nothing in flight
 * now gets a session.idle event: a front end driving many sessions
 * through one serve learns so when a run of its has ended, which no
 * other event says of a turn parked on a client's tool.
 */
static void
say_idle(struct serve *s)
{
	struct ring *r = &s->r;
	struct art_err err;
	enum art_engine_state st;
	jv all = r->touched, ev;

	if (jv_get_kind(all) != JV_KIND_OBJECT)
		return;
	r->touched = jv_object();
	jv_object_foreach(all, sid, v) {
		err.code = NULL;
		st = art_engine_session_state(r->engine, jv_string_value(sid),
		    &err);
		if (err.code != NULL)
			art_warn("session '%s': %s", jv_string_value(sid),
			    err.msg);
		else if (st != ART_ENGINE_BUSY && r->events != NULL) {
			ev = art_json_set(jv_object(), "type",
			    jv_string("session.idle"));
			ev = art_json_set(ev, "session_id", jv_copy(sid));
			ev = art_json_set(ev, "state",
			    jv_string(state_name(st)));
			if (loop_write_event(r, ev, &err) == -1) {
				art_warn("--events: a write failed: %s; no "
				    "more events are written", err.msg);
				fclose(r->events);
				r->events = NULL;
			}
		}
		jv_free(sid);
		jv_free(v);
	}
	jv_free(all);
}

static int
loop(struct serve *s)
{
	struct ring *r = &s->r;
	struct pollfd pfd[4];
	struct art_err err;
	int n;

	while (loop_stop_signal == 0 && !r->eof) {
		pfd[0] = (struct pollfd){ STDIN_FILENO, POLLIN, 0 };
		pfd[1] = (struct pollfd){ art_outq_pending(r->out) > 0 ?
		    art_outq_fd(r->out) : -1, POLLOUT, 0 };
		pfd[2] = (struct pollfd){ ack_pending(&s->acks) ? s->acks.fd :
		    -1, POLLOUT, 0 };
		pfd[3] = (struct pollfd){ s->clients_fd, POLLIN, 0 };
		n = poll(pfd, 4, loop_poll_timeout(r));
		if (n == -1 && errno != EINTR)
			return art_warn("poll: %s", strerror(errno)), -1;
		if (loop_stop_signal != 0)
			break;
		if (n > 0 && (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP)) &&
		    art_outq_flush(r->out, &err) == -1)
			return art_warn("write to the ring: %s", err.msg), -1;
		if (n > 0 && (pfd[2].revents & (POLLOUT | POLLERR | POLLHUP)))
			ack_flush(&s->acks);
		if (n > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    read_lines(s, false) == -1)
			return -1;
		if (n > 0 && (pfd[3].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    read_lines(s, true) == -1)
			return -1;
		if (art_engine_tick(r->engine, &err) == -1) {
			loop_drain(r);
			return store_failed(&err);
		}
		if (loop_drain(r) == -1)
			return -1;
		say_idle(s);
		if (art_engine_release_idle(r->engine, &err) == -1)
			return store_failed(&err);
	}
	return 0;
}

/* Opens --clients: a reader of its lines, as of stdin's. */
static void
open_clients(struct serve *s, const struct opts *o)
{
	if (o->clients == NULL)
		return;
	if ((s->clients_fd = open(o->clients, O_RDONLY | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		art_die(ART_EXIT_FAIL, "open --clients '%s': %s", o->clients,
		    strerror(errno));
	if ((s->clients = art_ndjson_reader_new(s->clients_fd, "--clients",
	    o->max_line, ART_NDJSON_REQUIRE_TYPE |
	    ART_NDJSON_EXACT_NUMBERS)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
}

int
session_serve(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct serve s = { .r = { .eof = 0 }, .acks = { .fd = -1 },
	    .clients_fd = -1 };
	int status;

	(void)argc, (void)argv;
	loop_refuse_terminal("serve", false);
	loop_open(&s.r, e, o);
	s.r.touched = s.r.events != NULL ? jv_object() : jv_null();
	open_clients(&s, o);
	s.acks.fd = open_acks(o->acks);
	s.batch = jv_array();
	status = adopt_orphans(&s) == -1 || loop(&s) == -1 ? ART_EXIT_FAIL :
	    ART_EXIT_OK;
	status = finish(&s, status);
	jv_free(s.batch);
	jv_free(s.r.touched);
	s.r.touched = jv_null();
	if (s.clients != NULL) {
		art_ndjson_reader_free(s.clients);
		close(s.clients_fd);
	}
	if (s.acks.fd >= 0)
		close(s.acks.fd);
	loop_close(&s.r, status);
	return status;
}
