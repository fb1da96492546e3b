/* portable.c - a session as a file: export, import, checkpoint, restore
 *
 * Everything here goes through the log: an export is the log, an import
 * appends the log's events as they were and folds each into the views
 * with art_session_apply(), as the engine did when it recorded them.  So
 * an imported session reads exactly as the exported one did, and what
 * the views would hold is never copied (a claim by a live driver, for
 * one, is not in the log and is not carried over).
 */
#include "portable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "json.h"
#include "request.h"
#include "log.h"
#include "session.h"
#include "sha.h"

#define HEADER_TYPE	"agentrt.export"

/* --- export ------------------------------------------------------------ */

/*
 * Appends sid and, depth first, the sub-agent sessions it spawned, in the
 * order its log requested them: an order that does not depend on the
 * ids, so a renamed copy of a family exports in the same order.
 */
static int
add_family(struct art_txn *t, const char *sid, jv *ids, int depth,
    struct art_err *err)
{
	jv evs, s;
	const char *type, *child;
	int r = 0;

	*ids = jv_array_append(*ids, jv_string(sid));
	if (depth > 64)
		return 0;	/* deeper than the engine lets sub-agents go */
	if (!jv_is_valid(evs = art_request_log_read(t, sid, 0, 0, err)))
		return -1;
	jv_array_foreach(evs, i, ev) {
		jv p = art_json_field(&ev, "payload");

		type = art_json_str(&p, "type");
		child = art_json_str(&p, "session_id");
		if (r == 0 && type != NULL && child != NULL &&
		    strcmp(type, "sub_agent.requested") == 0) {
			s = art_session_get(t, child, NULL);
			if (jv_is_valid(s))
				r = add_family(t, child, ids, depth + 1, err);
			jv_free(s);
		}
		jv_free(p);
		jv_free(ev);
	}
	jv_free(evs);
	return r;
}

static jv
family(struct art_txn *t, const char *sid, bool children,
    struct art_err *err)
{
	jv ids = jv_array();

	if (!children)
		return jv_array_append(ids, jv_string(sid));
	if (add_family(t, sid, &ids, 0, err) == -1) {
		jv_free(ids);
		return jv_invalid();
	}
	return ids;
}

/* Model calls the session completed, from its events. */
static int64_t
loop_iteration(const jv *events)
{
	int64_t n = 0;
	const char *t;

	jv_array_foreach(*events, i, ev) {
		jv p = art_json_field(&ev, "payload");

		t = art_json_str(&p, "type");
		if (t != NULL && strcmp(t, "llm.call.completed") == 0)
			n++;
		jv_free(p);
		jv_free(ev);
	}
	return n;
}

jv
art_export(struct art_txn *t, const char *sid, bool children,
    struct art_err *err)
{
	jv s, ids, lines, head, evs;
	int64_t loops = 0;

	if (!jv_is_valid(s = art_session_get(t, sid, err)))
		return s;
	jv_free(s);
	if (!jv_is_valid(ids = family(t, sid, children, err)))
		return ids;
	lines = jv_array();
	jv_array_foreach(ids, i, id) {
		evs = art_request_log_read(t, jv_string_value(id), 0, 0, err);
		jv_free(id);
		if (!jv_is_valid(evs)) {
			jv_free(lines);
			jv_free(ids);
			return evs;
		}
		if (i == 0)
			loops = loop_iteration(&evs);
		lines = jv_array_concat(lines, evs);
	}
	head = jv_object_set(jv_object(), jv_string("type"),
	    jv_string(HEADER_TYPE));
	head = jv_object_set(head, jv_string("version"),
	    jv_number(ART_EXPORT_VERSION));
	head = jv_object_set(head, jv_string("session"), jv_string(sid));
	head = jv_object_set(head, jv_string("sessions"), ids);
	head = jv_object_set(head, jv_string("loop_iteration"),
	    jv_number((double)loops));
	return jv_array_concat(jv_array_append(jv_array(), head), lines);
}

/* --- checking ---------------------------------------------------------- */

static int
bad(struct art_err *err, int line, const char *what)
{
	return art_err_set(err, "bad_export", "line %d: %s", line, what);
}

/* Is v an integer n >= 1? */
static bool
is_count(jv v, int64_t *n)
{
	double d;
	bool ok = jv_get_kind(v) == JV_KIND_NUMBER &&
	    (d = jv_number_value(v)) >= 1 && d <= 9007199254740991.0 &&
	    d == (double)(int64_t)d;

	if (ok)
		*n = (int64_t)jv_number_value(v);
	jv_free(v);
	return ok;
}

static int
check_header(const jv *h, jv *next, struct art_err *err)
{
	const char *t = art_json_str(h, "type"), *root;
	jv v, sessions;
	char msg[200];
	bool has_root = false;

	if (jv_get_kind(*h) != JV_KIND_OBJECT || t == NULL ||
	    strcmp(t, HEADER_TYPE) != 0)
		return bad(err, 1, "not an agentrt export: the first line has "
		    "no \"type\":\"" HEADER_TYPE "\"");
	v = art_json_field(h, "version");
	if (jv_get_kind(v) != JV_KIND_NUMBER ||
	    jv_number_value(v) != ART_EXPORT_VERSION) {
		snprintf(msg, sizeof(msg), "export version %s, but this "
		    "agentrt reads version %d", jv_get_kind(v) ==
		    JV_KIND_NUMBER ? "other than 1" : "missing",
		    ART_EXPORT_VERSION);
		if (jv_get_kind(v) == JV_KIND_NUMBER)
			snprintf(msg, sizeof(msg), "export version %g, but "
			    "this agentrt reads version %d",
			    jv_number_value(v), ART_EXPORT_VERSION);
		jv_free(v);
		return bad(err, 1, msg);
	}
	jv_free(v);
	if ((root = art_json_str(h, "session")) == NULL ||
	    !art_id_is_valid(root))
		return bad(err, 1, "the header has no valid \"session\"");
	sessions = art_json_field(h, "sessions");
	if (jv_get_kind(sessions) == JV_KIND_NULL)
		sessions = jv_array_append(jv_array(), jv_string(root));
	if (jv_get_kind(sessions) != JV_KIND_ARRAY) {
		jv_free(sessions);
		return bad(err, 1, "the header's \"sessions\" is not an array");
	}
	/* next: id -> the seq its next event must have. */
	*next = jv_object();
	jv_array_foreach(sessions, i, s) {
		if (jv_get_kind(s) != JV_KIND_STRING ||
		    !art_id_is_valid(jv_string_value(s))) {
			jv_free(s);
			jv_free(sessions);
			return bad(err, 1, "the header's \"sessions\" holds "
			    "something that is not a session id");
		}
		has_root |= strcmp(jv_string_value(s), root) == 0;
		*next = jv_object_set(*next, s, jv_number(1));
	}
	jv_free(sessions);
	if (!has_root)
		return bad(err, 1, "the header's \"sessions\" does not list "
		    "its \"session\"");
	return 0;
}

static int
check_event(const jv *ev, int line, jv *next, struct art_err *err)
{
	const char *sid = art_json_str(ev, "session_id"), *type;
	jv want, p;
	int64_t seq, w;
	char msg[400];
	int r = 0;

	if (jv_get_kind(*ev) != JV_KIND_OBJECT)
		return bad(err, line, "not an event: not a JSON object");
	if (sid == NULL)
		return bad(err, line, "the event has no string \"session_id\"");
	want = jv_object_get(jv_copy(*next), jv_string(sid));
	if (!jv_is_valid(want)) {
		jv_free(want);
		snprintf(msg, sizeof(msg), "session '%.128s' is not one the "
		    "header lists", sid);
		return bad(err, line, msg);
	}
	w = (int64_t)jv_number_value(want);
	jv_free(want);
	if (!is_count(art_json_field(ev, "seq"), &seq))
		return bad(err, line, "the event's \"seq\" is not a positive "
		    "integer");
	if (seq != w) {
		snprintf(msg, sizeof(msg), "seq %lld of session '%.128s' where "
		    "%lld was due: the log has a gap or is out of order",
		    (long long)seq, sid, (long long)w);
		return bad(err, line, msg);
	}
	if (art_json_str(ev, "occurred_at") == NULL)
		return bad(err, line, "the event has no string "
		    "\"occurred_at\"");
	p = art_json_field(ev, "turn_id");
	if (jv_get_kind(p) != JV_KIND_NULL && jv_get_kind(p) != JV_KIND_STRING)
		r = bad(err, line, "the event's \"turn_id\" is not a string");
	jv_free(p);
	if (r == -1)
		return -1;
	p = art_json_field(ev, "payload");
	type = art_json_str(&p, "type");
	if (jv_get_kind(p) != JV_KIND_OBJECT || type == NULL)
		r = bad(err, line, "the event's \"payload\" is not an object "
		    "with a string \"type\"");
	else if (seq == 1 && strcmp(type, "session.created") != 0)
		r = bad(err, line, "a session's first event is not "
		    "session.created");
	jv_free(p);
	if (r == 0)
		*next = jv_object_set(*next, jv_string(sid),
		    jv_number((double)seq + 1));
	return r;
}

int
art_import_check(const jv *lines, struct art_err *err)
{
	jv next = jv_invalid();
	int n = jv_array_length(jv_copy(*lines)), i, r = 0;
	char buf[200];

	if (n == 0)
		return bad(err, 1, "the file is empty");
	for (i = 0; i < n && r == 0; i++) {
		jv l = jv_array_get(jv_copy(*lines), i);

		r = i == 0 ? check_header(&l, &next, err) :
		    check_event(&l, i + 1, &next, err);
		jv_free(l);
	}
	if (r == 0) {
		jv_object_foreach(next, k, v) {
			if (r == 0 && jv_number_value(v) == 1) {
				snprintf(buf, sizeof(buf), "the header lists "
				    "session '%.128s' but no event of it "
				    "follows", jv_string_value(k));
				r = bad(err, n, buf);
			}
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(next);
	return r;
}

/* --- importing --------------------------------------------------------- */

/* v (consumed) with every string (and key) that map names replaced. */
static jv
rename_ids(jv v, const jv *map)
{
	jv out, to;

	switch (jv_get_kind(v)) {
	case JV_KIND_STRING:
		to = jv_object_get(jv_copy(*map), jv_copy(v));
		if (jv_is_valid(to)) {
			jv_free(v);
			return to;
		}
		jv_free(to);
		return v;
	case JV_KIND_ARRAY:
		out = jv_array();
		jv_array_foreach(v, i, e)
			out = jv_array_append(out, rename_ids(e, map));
		jv_free(v);
		return out;
	case JV_KIND_OBJECT:
		out = jv_object();
		jv_object_foreach(v, k, e)
			out = jv_object_set(out, rename_ids(k, map),
			    rename_ids(e, map));
		jv_free(v);
		return out;
	default:
		return v;
	}
}

/* old id -> new id for every session of the header. */
static jv
id_map(const jv *head, const char *as)
{
	jv sessions = art_json_field(head, "sessions"), map = jv_object();
	const char *root = art_json_str(head, "session");
	char name[2 * ART_ID_MAX + 2], id[ART_ID_BUFSZ];
	int n;

	if (jv_get_kind(sessions) != JV_KIND_ARRAY)
		sessions = jv_array_append(jv_array(), jv_string(root));
	jv_array_foreach(sessions, i, s) {
		const char *old = jv_string_value(s);

		if (as == NULL)
			map = jv_object_set(map, jv_copy(s), jv_copy(s));
		else if (strcmp(old, root) == 0)
			map = jv_object_set(map, jv_copy(s), jv_string(as));
		else {
			n = snprintf(name, sizeof(name), "%s:%s", as, old);
			art_ids_v5(ART_UUID_NS_AGENTRT, name, (size_t)n, id);
			map = jv_object_set(map, jv_copy(s), jv_string(id));
		}
		jv_free(s);
	}
	jv_free(sessions);
	return map;
}

/* Appends ev (borrowed) to its session's log as it is, and folds it in. */
static int
put_event(struct art_txn *t, const jv *ev, struct art_err *err)
{
	unsigned char key[8];
	int64_t seq = 0;

	art_json_get_int(ev, "seq", 1, &seq, NULL);
	art_be64_put(key, (uint64_t)seq);
	if (art_store_add(t, ART_DB_EVENTS, art_json_str(ev, "session_id"),
	    key, 8, jv_copy(*ev), err) == -1)
		return -1;
	return art_session_apply(t, ev, err);
}

jv
art_import_renamed(const jv *lines, const char *as)
{
	jv head = jv_array_get(jv_copy(*lines), 0), map = id_map(&head, as);
	jv out = rename_ids(jv_copy(*lines), &map);

	jv_free(head);
	jv_free(map);
	return out;
}

int
art_import(struct art_txn *t, const jv *lines, jv *ids, struct art_err *err)
{
	jv head = jv_array_get(jv_copy(*lines), 0), s;
	jv all = art_json_field(&head, "sessions");
	int r = 0;

	if (jv_get_kind(all) != JV_KIND_ARRAY) {
		jv_free(all);
		all = jv_array_append(jv_array(), art_json_field(&head,
		    "session"));
	}
	jv_array_foreach(all, i, id) {
		s = art_session_get(t, jv_string_value(id), NULL);
		if (r == 0 && jv_is_valid(s))
			r = art_err_set(err, "exists", "session '%s' exists: "
			    "give --as NEW_ID to make a new session of it",
			    jv_string_value(id));
		jv_free(s);
		jv_free(id);
	}
	jv_array_foreach(*lines, i, l) {
		if (r == 0 && i > 0)
			r = put_event(t, &l, err);
		jv_free(l);
	}
	if (r == 0 && ids != NULL)
		*ids = all;
	else
		jv_free(all);
	jv_free(head);
	return r;
}

/* --- checkpoints ------------------------------------------------------- */

unsigned char *
art_checkpoint_blob(const jv *lines, size_t *len, struct art_err *err)
{
	jv body = jv_string("");
	unsigned char *blob;
	size_t n;

	jv_array_foreach(*lines, i, l) {
		body = jv_string_concat(body, jv_dump_string(l,
		    JV_PRINT_SORTED));
		body = jv_string_append_str(body, "\n");
	}
	n = (size_t)jv_string_length_bytes(jv_copy(body));
	if ((blob = malloc(n + 4)) == NULL) {
		jv_free(body);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	blob[0] = (ART_CHECKPOINT_VERSION >> 24) & 0xff;
	blob[1] = (ART_CHECKPOINT_VERSION >> 16) & 0xff;
	blob[2] = (ART_CHECKPOINT_VERSION >> 8) & 0xff;
	blob[3] = ART_CHECKPOINT_VERSION & 0xff;
	memcpy(blob + 4, jv_string_value(body), n);
	jv_free(body);
	*len = n + 4;
	return blob;
}

unsigned char *
art_checkpoint(struct art_txn *t, const char *sid, size_t *len,
    struct art_err *err)
{
	jv lines = art_export(t, sid, true, err);
	unsigned char *blob;

	if (!jv_is_valid(lines))
		return NULL;
	blob = art_checkpoint_blob(&lines, len, err);
	jv_free(lines);
	return blob;
}

jv
art_checkpoint_lines(const unsigned char *blob, size_t len,
    struct art_err *err)
{
	uint32_t v;
	size_t at = 4, end;
	jv lines = jv_array(), l;
	char *text;
	int line = 1;

	if (len < 4) {
		art_err_set(err, "bad_checkpoint", "not a checkpoint: %zu "
		    "bytes, shorter than its version prefix", len);
		return jv_invalid();
	}
	v = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 |
	    (uint32_t)blob[2] << 8 | blob[3];
	if (v != ART_CHECKPOINT_VERSION) {
		art_err_set(err, "version", "checkpoint schema version %lu, but "
		    "this agentrt reads version %d", (unsigned long)v,
		    ART_CHECKPOINT_VERSION);
		return jv_invalid();
	}
	while (at < len) {
		for (end = at; end < len && blob[end] != '\n'; end++)
			;
		if ((text = malloc(end - at + 1)) == NULL) {
			jv_free(lines);
			art_err_set(err, "nomem", "out of memory");
			return jv_invalid();
		}
		memcpy(text, blob + at, end - at);
		text[end - at] = '\0';
		l = art_json_parse(text, end - at, err);
		free(text);
		if (!jv_is_valid(l)) {
			jv_free(l);
			jv_free(lines);
			art_err_prefix(err, "bad checkpoint: line %d", line);
			return jv_invalid();
		}
		lines = jv_array_append(lines, l);
		at = end + 1;
		line++;
	}
	return lines;
}
