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

#include "diag.h"
#include "err.h"
#include "ids.h"
#include "json.h"
#include "request.h"
#include "log.h"
#include "ndjson.h"
#include "replay.h"
#include "ring.h"
#include "session.h"

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

/* lines (consumed), one a line, into a new file at path; -1 with errno. */
static int
put_lines(const char *path, jv lines)
{
	int fd, rc, saved;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	rc = fd == -1 ? -1 : 0;
	jv_array_foreach(lines, i, l) {
		if (rc == 0 && put_line(fd, l) == -1)
			rc = -1;
		else if (rc == -1)
			jv_free(l);
		(void)i;
	}
	jv_free(lines);
	saved = errno;
	if (fd != -1)
		close(fd);
	errno = saved;
	return rc;
}

/* The cassette and the tape, of every session in the file. */
static int
write_answers(struct replay *r, const jv *lines)
{
	if (put_lines(r->cassette, art_replay_cassette(lines)) == -1 ||
	    put_lines(r->tape, art_replay_tape(lines)) == -1) {
		art_warn("replay: write '%s': %s", r->dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* Each session's agent file, as the recording started it. */
static int
write_agents(struct replay *r, const jv *lines)
{
	jv files = art_replay_agent_files(lines);
	char path[PATH_MAX * 2];
	int fd, bad = 0;

	jv_object_foreach(files, id, file) {
		snprintf(path, sizeof(path), "%s/%s.json", r->agents,
		    jv_string_value(id));
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd == -1 || put_line(fd, jv_copy(file)) == -1)
			bad = 1;
		if (fd != -1)
			close(fd);
		jv_free(id);
		jv_free(file);
	}
	jv_free(files);
	if (bad)
		art_warn("replay: write '%s': %s", r->agents, strerror(errno));
	return bad ? -1 : 0;
}

/* --- running the ring ---------------------------------------------------- */

/*
 * One ring: decide | llm --replay | tool --replay | session run, closed
 * on itself, o the session's part of it.  The status of the session
 * stage, or -1.
 */
static int
ring(struct replay *r, struct art_ring_opts *o)
{
	struct art_ring_cmd cmd = ART_RING_CMD_INIT;
	struct art_spawn s[ART_RING_STAGES];
	struct art_ring rg;
	struct art_err err;
	int st, rc;

	o->bindir = r->bindir;
	o->policy = r->o->policy;
	o->llm_replay = r->cassette;
	o->tool_replay = r->tape;
	o->db = art_store_dir(r->env->store);
	o->verb = "run";
	if (art_ring_cmd_make(&cmd, o, &err) == -1) {
		art_warn("replay: %s", err.msg);
		return -1;
	}
	art_ring_cmd_spawn(&cmd, s);
	rc = art_ring_start(&rg, s, ART_RING_STAGES, false, &err);
	art_ring_cmd_release(&cmd);
	if (rc == -1) {
		art_warn("replay: %s", err.msg);
		return -1;
	}
	art_ring_reap(&rg, true);
	st = rg.status[ART_RING_SESSION];
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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
	const char *dirs[MAX_AGENT_DIRS + 1];
	struct art_ring_opts o = { .sid = r->sid, .agent_dirs = dirs };
	jv text = jv_invalid(), payload = art_json_field(in, "resume");
	int st, i;

	if (first)
		o.agent = r->agent;
	for (i = 0; i < r->o->nagent_dirs; i++)
		dirs[o.nagent_dirs++] = r->o->agent_dirs[i];
	dirs[o.nagent_dirs++] = r->agents;
	if (jv_is_valid(payload) && jv_get_kind(payload) != JV_KIND_NULL) {
		if (art_store_read(r->env->store, open_intr_fn, &x, &err) ==
		    -1 || x.id[0] == '\0') {
			jv_free(payload);
			return 1;	/* nothing to resume: the compare says */
		}
		text = jv_dump_string(payload, 0);
		o.resume = x.id;
		o.payload = jv_string_value(text);
	} else {
		jv_free(payload);
		text = jv_dump_string(jv_copy(*in), 0);
		o.input = jv_string_value(text);
	}
	st = ring(r, &o);
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

int
session_replay(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct replay r = { .env = e, .o = o };
	struct read_events x = { NULL, jv_invalid() };
	struct art_err err;
	const char *tmp = getenv("TMPDIR");
	jv lines, head, rec, inputs, div;
	char tail[7];
	int status = ART_EXIT_OK, n;
	bool passed;

	/* Said before any ring runs: decide would only die in it. */
	if (o->policy != NULL && access(o->policy, R_OK) == -1)
		art_die(ART_EXIT_USAGE, "replay: --policy '%s': %s", o->policy,
		    strerror(errno));

	if (!jv_is_valid(lines = session_read_export(argc > 0 ? argv[0] :
	    NULL, "nothing replayed")))
		return ART_EXIT_FAIL;
	head = jv_array_get(jv_copy(lines), 0);
	r.recorded = art_json_str(&head, "session");
	rec = art_replay_events(&lines, r.recorded);
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
	art_ring_bindir(r.bindir, sizeof(r.bindir));
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
	inputs = art_replay_inputs(&rec);
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
	div = art_replay_verdict(&rec, &x.events, r.sid, r.recorded, &passed);
	jv_free(x.events);
	if (!passed)
		status = ART_EXIT_FAIL;
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
