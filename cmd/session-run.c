/* session-run.c - agentrt-session run: the engine on a ring of filters
 *
 * stdin and stdout are the ring.  The loop polls both, and never blocks
 * writing: what the ring will not take yet waits in an art_outq while the
 * loop keeps reading, so a ring of full pipes cannot deadlock.  Timers
 * (deadlines, retry backoff) are the poll's timeout.
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
#include "json.h"
#include "ndjson.h"
#include "outq.h"
#include "reconcile.h"
#include "session.h"

#include "session-cmd.h"
#include "session-loop.h"


struct turn_of {
	const char	*sid;
	jv		 turn;
};

static int
turn_of_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct turn_of *q = ctx;
	jv s = art_session_get(t, q->sid, err);

	q->turn = jv_is_valid(s) ? art_json_field(&s, "turn") : jv_null();
	jv_free(s);
	return 0;
}

/* A client event of the failed run: {type, session_id, turn_id?}. */
static jv
run_event(const char *type, const char *sid, const jv *turn)
{
	jv ev = art_json_set(jv_object(), "type", jv_string(type));

	ev = art_json_set(ev, "session_id", jv_string(sid));
	if (jv_get_kind(*turn) == JV_KIND_STRING)
		ev = art_json_set(ev, "turn_id", jv_copy(*turn));
	return ev;
}

/*
 * The engine could not record a step (a full disk is err code
 * "no_space"): nothing of it is in the store, and nothing it would have
 * caused went out.  Said on stderr, and on --events as an error and the
 * turn's completion, so a client waiting on the turn hears this run
 * ended it.  The session stays as its last commit left it, so run -s
 * resumes it.  Returns the run's exit status.
 */
static int
store_failed(struct ring *r, const struct art_err *failed)
{
	struct turn_of q = { r->sid, jv_null() };
	struct art_err err;
	const char *code = failed->code != NULL ? failed->code : "store";
	jv ev;

	art_warn("%s", failed->msg);
	if (art_err_is(failed, "no_space"))
		art_warn("session '%s' is as its last commit left it: free "
		    "some space, then run again with -s %s", r->sid, r->sid);
	else if (r->sid[0] != '\0')
		art_warn("session '%s' is as its last commit left it: run "
		    "again with -s %s once the store can be written", r->sid,
		    r->sid);
	if (r->events == NULL || r->sid[0] == '\0')
		return ART_EXIT_FAIL;
	art_store_read(r->store, turn_of_fn, &q, &err);
	ev = run_event("error", r->sid, &q.turn);
	ev = art_json_set(ev, "code", jv_string(code));
	ev = art_json_set(ev, "message", jv_string(failed->msg));
	ev = art_json_set(ev, "retrying", jv_false());
	if (loop_write_event(r, ev, &err) == 0) {
		ev = run_event("completion", r->sid, &q.turn);
		ev = art_json_set(ev, "text", jv_null());
		ev = art_json_set(ev, "error", jv_string(failed->msg));
		ev = art_json_set(ev, "code", jv_string(code));
		if (loop_write_event(r, ev, &err) == -1)
			art_warn("write events: %s", err.msg);
	} else
		art_warn("write events: %s", err.msg);
	jv_free(q.turn);
	return ART_EXIT_FAIL;
}

/*
 * A reader of one --input: its JSON text, or @FILE's bytes (@- the
 * standard input) read as they are, so that bad UTF-8 is seen, not
 * replaced as a jv string would.  *fd is the file's, or -1.
 */
static struct art_ndjson_reader *
input_reader(const char *arg, size_t max_line, int *fd)
{
	struct art_ndjson_reader *rd;
	struct art_err err;

	*fd = -1;
	if (arg[0] == '@' && (*fd = strcmp(arg, "@-") == 0 ? STDIN_FILENO :
	    open(arg + 1, O_RDONLY)) == -1)
		art_die(ART_EXIT_USAGE, "read --input '%s': %s", arg + 1,
		    strerror(errno));
	rd = art_ndjson_reader_new(*fd, "--input", max_line,
	    ART_NDJSON_REQUIRE_TYPE | ART_NDJSON_EXACT_NUMBERS);
	if (rd == NULL || (*fd == -1 && art_ndjson_feed(rd, arg, strlen(arg),
	    &err) == -1))
		art_die(ART_EXIT_FAIL, "out of memory");
	if (*fd == -1)
		art_ndjson_feed_eof(rd);
	return rd;
}

/*
 * A line of --input the run could only record as refused, said now,
 * with its line number, before anything is recorded: a type the engine
 * does not know, or a second message (a run takes one turn, so the
 * engine would refuse it as turn_already_active).  *messages counts
 * the client.message and client.messages lines so far.
 */
static int
check_input(const jv *line, size_t at, int *messages)
{
	const char *type = art_json_str(line, "type");
	struct art_err err;
	jv view;
	bool bad;

	if (!art_engine_takes(type)) {
		art_warn("--input:%zu: unknown line type '%.100s' (a client "
		    "line is client.message, client.messages, client.action "
		    "or interrupt.resume)", at, type);
		return ART_EXIT_USAGE;
	}
	if (strcmp(type, "client.message") != 0 &&
	    strcmp(type, "client.messages") != 0)
		return 0;
	view = strcmp(type, "client.message") == 0 ? jv_array_append(
	    jv_array(), art_json_field(line, "message")) :
	    art_json_field(line, "messages");
	bad = art_reconcile_check(&view, &err) == -1;
	jv_free(view);
	if (bad) {
		art_warn("--input:%zu: bad_input: %s", at, err.msg);
		return ART_EXIT_USAGE;
	}
	if (++*messages > 1) {
		art_warn("--input:%zu: a second %s: one run takes one turn's "
		    "message, and the turn the first starts is still going "
		    "(turn_already_active); send it with another run", at,
		    type);
		return ART_EXIT_USAGE;
	}
	return 0;
}

/* Appends one --input's lines to *lines; ART_EXIT_USAGE at a bad one. */
static int
read_input(const char *arg, size_t max_line, jv *lines, int *messages)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	struct pollfd pfd;
	const char *why;
	int fd, status = 0;
	enum art_ndjson_status st;
	jv line;

	rd = input_reader(arg, max_line, &fd);
	while (status == 0 &&
	    (st = art_ndjson_next(rd, &line, &err)) != ART_NDJSON_EOF) {
		if (st == ART_NDJSON_OK) {
			status = check_input(&line, art_ndjson_lineno(rd),
			    messages);
			*lines = jv_array_append(*lines, line);
		} else if (st == ART_NDJSON_AGAIN) {
			/* A non-blocking stdin: wait for it. */
			pfd = (struct pollfd){ fd, POLLIN, 0 };
			(void)poll(&pfd, 1, -1);
		} else if (st == ART_NDJSON_IOERR) {
			why = strstr(err.msg, ": ");
			art_warn("read --input '%s': %s", arg + 1,
			    why != NULL ? why + 2 : err.msg);
			status = ART_EXIT_USAGE;
		} else {
			art_warn("--input:%zu: %s", art_ndjson_lineno(rd),
			    err.msg);
			status = ART_EXIT_USAGE;
		}
	}
	art_ndjson_reader_free(rd);
	if (fd > STDIN_FILENO)
		close(fd);
	return status;
}

/*
 * Every --input line, each checked as the ring's reader checks a line,
 * before any is taken: a bad line anywhere is a usage error naming it,
 * and nothing is recorded, not even a new session.  *lines is the
 * caller's either way.
 */
static int
read_inputs(const struct opts *o, jv *lines)
{
	int i, status = 0, messages = 0;

	*lines = jv_array();
	for (i = 0; i < o->ninputs && status == 0; i++)
		status = read_input(o->inputs[i], o->max_line, lines,
		    &messages);
	if (status == 0 && messages > 0 && o->message != NULL) {
		art_warn("-m and a client message in --input: one run takes "
		    "one turn's message; send one of them with another run");
		status = ART_EXIT_USAGE;
	}
	return status;
}

struct agent_of {
	const char	*sid;
	char		 id[ART_ID_MAX + 1];
};

static int
agent_of_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct agent_of *a = ctx;
	jv s = art_session_get(t, a->sid, err);
	const char *id = art_json_str(&s, "agent_id");

	if (id != NULL)
		snprintf(a->id, sizeof(a->id), "%s", id);
	jv_free(s);
	return 0;
}

/*
 * The agent the run's inputs go to: the session's (-s), else -a's; ""
 * when neither says (the engine then refuses the run itself).
 */
static void
run_agent(struct art_store *store, const struct opts *o, char *out,
    size_t len)
{
	struct agent_of a = { o->session, "" };
	struct art_err err;

	if (o->session != NULL)
		(void)art_store_read(store, agent_of_fn, &a, &err);
	snprintf(out, len, "%s", *a.id != '\0' ? a.id : o->agent != NULL ?
	    o->agent : "");
}

/*
 * A ClientInput names the agent it is for (seed ClientInput.agent_id):
 * one addressed to another agent than the session's is refused before
 * anything is recorded, as a bad --input line is.
 */
static int
check_agents(struct art_store *store, const struct opts *o, const jv *lines)
{
	char want[ART_ID_MAX + 1];
	const char *type, *got;
	jv e;

	run_agent(store, o, want, sizeof(want));
	jv_array_foreach(*lines, i, l) {
		type = art_json_str(&l, "type");
		got = art_json_str(&l, "agent_id");
		if (*want != '\0' && type != NULL && got != NULL &&
		    strncmp(type, "client.", 7) == 0 && strcmp(got, want) != 0) {
			e = jv_object_set(jv_object(), jv_string("type"),
			    jv_string("error"));
			e = jv_object_set(e, jv_string("code"),
			    jv_string("agent_mismatch"));
			e = jv_object_set(e, jv_string("message"), jv_string_fmt(
			    "%s is for agent '%s', not this session's agent "
			    "'%s'", type, got, want));
			art_warn("--input: %s", art_json_str(&e, "message"));
			if (o->session != NULL)
				e = jv_object_set(e, jv_string("session_id"),
				    jv_string(o->session));
			(void)art_ndjson_write(stdout, e, NULL);
			jv_free(l);
			return ART_EXIT_USAGE;
		}
		jv_free(l);
	}
	return 0;
}

/* The --input lines (consumed), all in one transaction. */
static int
send_inputs(struct ring *r, jv lines)
{
	struct art_err err;

	if (jv_array_length(jv_copy(lines)) == 0) {
		jv_free(lines);
		return 0;
	}
	if (art_engine_input_batch(r->engine, r->sid, lines, &err) == -1) {
		loop_drain(r);
		return store_failed(r, &err);
	}
	return 0;
}

/* --resume ID [--payload JSON]: an interrupt.resume line. */
static int
send_resume(struct ring *r, const struct opts *o)
{
	struct art_err err;
	jv line, text, payload = jv_null();

	if (o->resume == NULL)
		return 0;
	if (o->payload != NULL) {
		text = session_option_text("--payload", o->payload);
		payload = art_json_parse_str(jv_string_value(text), &err);
		jv_free(text);
		if (!jv_is_valid(payload)) {
			jv_free(payload);
			art_warn("--payload: %s", err.msg);
			return ART_EXIT_USAGE;
		}
	}
	line = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("interrupt.resume"));
	line = jv_object_set(line, jv_string("interrupt_id"),
	    jv_string(o->resume));
	if (jv_get_kind(payload) != JV_KIND_NULL)
		line = jv_object_set(line, jv_string("payload"), payload);
	else
		jv_free(payload);
	if (art_engine_input(r->engine, r->sid, line, &err) == -1) {
		loop_drain(r);
		return store_failed(r, &err);
	}
	return 0;
}

/* -m TEXT as a client.message line. */
static jv
message_line(const struct opts *o)
{
	jv m, line;

	m = jv_object_set(jv_object(), jv_string("role"), jv_string("user"));
	m = jv_object_set(m, jv_string("content"), jv_string(o->message));
	line = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("client.message"));
	line = jv_object_set(line, jv_string("message"), m);
	if (o->turn_id != NULL)
		line = jv_object_set(line, jv_string("turn_id"),
		    jv_string(o->turn_id));
	return line;
}

static int
send_message(struct ring *r, const struct opts *o)
{
	struct art_err err;

	if (o->message == NULL)
		return 0;
	if (art_engine_input(r->engine, r->sid, message_line(o), &err) == -1) {
		loop_drain(r);
		return store_failed(r, &err);
	}
	return 0;
}

/*
 * The line a new session is made with, in the same commit (its first
 * --input, else -m's), taken off *inputs; jv_null() when there is none.
 */
static jv
first_input(const struct opts *o, jv *inputs, bool *message_sent)
{
	jv first;

	if (jv_array_length(jv_copy(*inputs)) > 0) {
		first = jv_array_get(jv_copy(*inputs), 0);
		*inputs = jv_array_slice(*inputs, 1, jv_array_length(
		    jv_copy(*inputs)));
		return first;
	}
	if (o->message == NULL || o->resume != NULL)
		return jv_null();
	*message_sent = true;
	return message_line(o);
}

/*
 * The session could not be started: nothing of this run is recorded.
 * A new session was not made at all, so there is nothing to resume.
 */
static int
start_failed(struct ring *r, const struct opts *o, const struct art_err *err)
{
	(void)r;
	art_warn("%s", err->msg);
	if (art_err_is(err, "no_agent"))
		return ART_EXIT_USAGE;
	if (o->session == NULL && (art_err_is(err, "no_space") ||
	    art_err_is(err, "store")))
		art_warn("nothing was recorded and no session was made: run "
		    "the same command again once the store can be written");
	else if (art_err_is(err, "no_space") || art_err_is(err, "store"))
		art_warn("session '%s' is as its last commit left it: nothing "
		    "this run sent was recorded; run the same command again",
		    o->session);
	return ART_EXIT_FAIL;
}

/*
 * Reads what the ring has, every bad line becoming an error event, and
 * hands it to the engine a batch at a time: one transaction and at most
 * one sync for all of it (group commit), then its output is written.
 */
static int
read_ring(struct ring *r)
{
	struct art_err err;
	jv line, batch;
	int st = ART_NDJSON_OK, n;

	while (st != ART_NDJSON_AGAIN && !r->eof) {
		batch = jv_array();
		for (n = 0; n < RING_BATCH_MAX; n++) {
			st = art_ndjson_next(r->in, &line, &err);
			if (st == ART_NDJSON_AGAIN)
				break;
			if (st == ART_NDJSON_EOF || st == ART_NDJSON_IOERR) {
				if (st == ART_NDJSON_IOERR)
					art_warn("%s", err.msg);
				r->eof = 1;
				break;
			}
			if (st == ART_NDJSON_BAD) {
				art_warn("<stdin>:%zu: %s",
				    art_ndjson_lineno(r->in), err.msg);
				line = art_ndjson_bad_line(r->in, &err);
			}
			batch = jv_array_append(batch, line);
		}
		if (art_engine_input_batch(r->engine, r->sid, batch,
		    &err) == -1) {
			loop_drain(r);	/* what did commit still goes out */
			return store_failed(r, &err), -1;
		}
		if (loop_drain(r) == -1)
			return -1;
	}
	return 0;
}


/*
 * Stopped by a signal: nobody will answer what is in flight, so the
 * turn is cancelled (its decision dropped, its calls voided) rather than
 * left running for no one.  What it recorded stays.
 */
static int
stopped(struct ring *r)
{
	struct art_err err;

	if (art_engine_stop(r->engine, &err) == -1)
		art_warn("interrupted: %s", err.msg);
	/* The words of agentrt-session cancel: it is the same end. */
	if (art_engine_cancel(r->engine, r->sid, "cancelled", &err) == -1) {
		art_warn("interrupted: %s; session '%s' is left in flight: run "
		    "again with -s %s to resume", err.msg, r->sid, r->sid);
		return ART_EXIT_FAIL;
	}
	loop_drain(r);
	art_warn("interrupted (%s): the turn of session '%s' is cancelled",
	    loop_stop_signal == SIGINT ? "SIGINT" : "SIGTERM", r->sid);
	return ART_EXIT_FAIL;
}

/*
 * The ring closed with work in flight.  A ring made with >ring and no
 * mkfifo is a plain file: its reader read it to its end and went, so
 * nothing could answer; say that, not just that the ring closed.
 */
static int
ring_closed(struct ring *r)
{
	struct stat sb;

	if (fstat(STDOUT_FILENO, &sb) == 0 && S_ISREG(sb.st_mode))
		art_warn("the ring is a regular file, not a fifo: rm ring && "
		    "mkfifo ring, then run again with -s %s to resume",
		    r->sid);
	else
		art_warn("the ring closed with session '%s' in flight; run "
		    "again with -s %s to resume", r->sid, r->sid);
	r->failed = "the ring closed with the turn in flight";
	return ART_EXIT_FAIL;
}

struct open_interrupts {
	const char	*sid;
	jv		 all;
};

static int
interrupts_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct open_interrupts *q = ctx;
	jv s = art_session_get(t, q->sid, err);

	q->all = jv_is_valid(s) ? art_json_field(&s, "interrupts") : jv_null();
	jv_free(s);
	return 0;
}

/* The --payload an interrupt (borrowed) wants, as an option; "" none. */
static const char *
payload_for(const jv *it)
{
	jv p = art_json_field(it, "payload");
	const char *type = art_json_str(&p, "type"), *opt;

	if (type != NULL && strcmp(type, "llm.failed") == 0)
		opt = "";	/* a retry: the call is made again */
	else if (type != NULL && strcmp(type, "approval") == 0)
		opt = " --payload '{\"approved\":true}'";
	else if (art_json_str(&p, "question") != NULL)
		opt = " --payload '{\"answer\":\"...\"}'";
	else
		opt = " --payload JSON";
	jv_free(p);
	return opt;
}

/*
 * A parked session: for each open interrupt, the command that resumes
 * it, with the payload it wants (none for a failed call, which a resume
 * retries).
 */
static void
say_parked(struct ring *r)
{
	struct open_interrupts q = { r->sid, jv_null() };
	struct art_err err;

	if (art_store_read(r->store, interrupts_fn, &q, &err) == -1 ||
	    jv_get_kind(q.all) != JV_KIND_OBJECT) {
		jv_free(q.all);
		return;
	}
	jv_object_foreach(q.all, id, it) {
		const char *why = art_json_str(&it, "reason");

		art_warn("session '%s' is parked on interrupt %s (%s): resume "
		    "it with agentrt-session run -s %s --resume %s%s >ring",
		    r->sid, jv_string_value(id), why != NULL ? why : "?",
		    r->sid, jv_string_value(id), payload_for(&it));
		jv_free(id);
		jv_free(it);
	}
	jv_free(q.all);
}

static int
exit_status(enum art_engine_state st)
{
	switch (st) {
	case ART_ENGINE_DONE:	return ART_EXIT_OK;
	case ART_ENGINE_PARKED:	return 3;
	default:		return ART_EXIT_FAIL;
	}
}


static int
loop(struct ring *r)
{
	struct pollfd pfd[2];
	struct art_err err;
	enum art_engine_state st;
	int n;

	for (;;) {
		st = art_engine_state(r->engine, &err);
		if (st != ART_ENGINE_BUSY && art_outq_pending(r->out) == 0)
			return exit_status(st);
		if (loop_stop_signal != 0)
			return stopped(r);
		if (r->eof)
			return ring_closed(r);
		pfd[0] = (struct pollfd){ STDIN_FILENO, POLLIN, 0 };
		pfd[1] = (struct pollfd){ art_outq_fd(r->out), POLLOUT, 0 };
		n = poll(pfd, art_outq_pending(r->out) > 0 ? 2 : 1,
		    loop_poll_timeout(r));
		if (n == -1 && errno != EINTR)
			return art_warn("poll: %s", strerror(errno)),
			    ART_EXIT_FAIL;
		if (loop_stop_signal != 0)
			return stopped(r);
		if (n > 0 && (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP)) &&
		    art_outq_flush(r->out, &err) == -1)
			return loop_stop_signal != 0 ? stopped(r) :
			    (art_warn("write to the ring: %s", err.msg),
			    ART_EXIT_FAIL);
		if (n > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    read_ring(r) == -1)
			return loop_stop_signal != 0 ? stopped(r) :
			    ART_EXIT_FAIL;
		if (art_engine_tick(r->engine, &err) == -1) {
			loop_drain(r);
			return store_failed(r, &err);
		}
		if (loop_drain(r) == -1)
			return loop_stop_signal != 0 ? stopped(r) :
			    ART_EXIT_FAIL;
	}
}


/*
 * A run of an existing session given nothing to send: no -m, no --input,
 * no --resume.  It finishes what is in flight, if anything.
 */
static bool
asks_nothing(const struct opts *o, int inputs)
{
	return o->session != NULL && o->message == NULL &&
	    o->resume == NULL && inputs == 0;
}

/*
 * Such a run of a session with nothing in flight ends at once, so a line
 * piped into the ring for it would never be read: say so rather than
 * drop it without a word.
 */
static void
say_idle(struct ring *r)
{
	struct art_err err;

	if (art_engine_state(r->engine, &err) == ART_ENGINE_DONE &&
	    art_outq_pending(r->out) == 0)
		art_warn("session '%s' has no turn in flight and this run was "
		    "given nothing to send: it ends now, and what the ring "
		    "carries for it is not read (send a message with -m TEXT "
		    "or --input FILE)", r->sid);
}

int
session_run(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct ring r = { .eof = 0 };
	struct art_err err;
	int status, inputs0;
	bool message_sent = false;
	jv inputs, first;

	(void)argc, (void)argv;
	loop_refuse_terminal("run ...", true);
	if ((status = read_inputs(o, &inputs)) != 0 ||
	    (status = check_agents(e->store, o, &inputs)) != 0) {
		jv_free(inputs);
		return status;
	}
	loop_open(&r, e, o);
	inputs0 = jv_array_length(jv_copy(inputs));
	first = first_input(o, &inputs, &message_sent);
	if (art_engine_start_with(r.engine, o->session, o->agent, first,
	    r.sid, &err) == -1) {
		status = start_failed(&r, o, &err);
	} else {
		/* Said where it is needed: a turn that does not complete says
		 * the id in its own message, to resume it. */
		if (o->session == NULL && o->verbose)
			art_warn("session %s", r.sid);
		status = send_inputs(&r, inputs);
		inputs = jv_null();
		if (status == 0)
			status = send_resume(&r, o);
		if (status == 0 && !message_sent)
			status = send_message(&r, o);
		if (status == 0 && asks_nothing(o, inputs0))
			say_idle(&r);
		if (status == 0)
			status = loop_drain(&r) == 0 ? loop(&r) :
			    loop_stop_signal != 0 ? stopped(&r) : ART_EXIT_FAIL;
		if (status == 3)
			say_parked(&r);
	}
	/* Its last commit, which lets the sessions go, is said too. */
	if (art_engine_stop(r.engine, &err) == -1) {
		art_warn("%s; session '%s' stays marked as driven by this "
		    "process until a run or serve takes it over", err.msg,
		    r.sid);
		if (status == 0 || status == 3)
			status = ART_EXIT_FAIL;
	}
	/* The turn is recorded, but its client did not see it all. */
	if (status == 0 && r.events_lost[0] != '\0') {
		art_warn("the turn completed, but --events lost events (%s): "
		    "exit 1; agentrt-session log %s has them all",
		    r.events_lost, r.sid);
		status = ART_EXIT_FAIL;
	}
	jv_free(inputs);
	if (loop_close(&r, status) == -1 && status == 0)
		status = ART_EXIT_FAIL;
	return status;
}
