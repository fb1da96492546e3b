/* cassette.c - model exchanges kept in a file and played back */
#include "cassette.h"

#include <stdlib.h>
#include <string.h>

#include "exchanges.h"
#include "json.h"
#include "sha.h"

struct art_cassette {
	struct art_exchanges	*e;
};

/* Is m a tool message? */
static bool
is_tool(const jv *m)
{
	const char *role = art_json_str(m, "role");

	return role != NULL && strcmp(role, "tool") == 0;
}

/* The run of tool messages (consumed) sorted by tool_call_id, onto out. */
static jv
flush_run(jv out, jv run, jv keys)
{
	if (jv_array_length(jv_copy(run)) > 1)
		run = jv_sort(run, keys);
	else
		jv_free(keys);
	return jv_array_concat(out, run);
}

jv
art_cassette_messages(jv msgs)
{
	jv out = jv_array(), run = jv_array(), keys = jv_array();
	const char *id;

	if (jv_get_kind(msgs) != JV_KIND_ARRAY) {
		jv_free(out);
		jv_free(run);
		jv_free(keys);
		return msgs;
	}
	jv_array_foreach(msgs, i, m) {
		if (jv_get_kind(m) == JV_KIND_OBJECT)
			m = jv_object_delete(m, jv_string("id"));
		if (is_tool(&m)) {
			id = art_json_str(&m, "tool_call_id");
			keys = jv_array_append(keys, jv_string(id != NULL ? id :
			    ""));
			run = jv_array_append(run, m);
			continue;
		}
		out = flush_run(out, run, keys);
		run = jv_array();
		keys = jv_array();
		out = jv_array_append(out, m);
	}
	jv_free(msgs);
	return flush_run(out, run, keys);
}

/* request as its key sees it: see art_cassette_messages(). */
static jv
without_ids(const jv *request)
{
	jv msgs = art_json_field(request, "messages");

	if (jv_get_kind(msgs) != JV_KIND_ARRAY) {
		jv_free(msgs);
		return jv_copy(*request);
	}
	return jv_object_set(jv_copy(*request), jv_string("messages"),
	    art_cassette_messages(msgs));
}

void
art_cassette_key(const char *model, const jv *request,
    char hex[ART_CASSETTE_KEY_LEN + 1])
{
	unsigned char sum[ART_SHA256_LEN];
	jv pair = jv_array_append(jv_array_append(jv_array(),
	    jv_string(model)), without_ids(request));
	jv text = jv_dump_string(art_json_canon(pair), 0);

	art_sha256(jv_string_value(text),
	    (size_t)jv_string_length_bytes(jv_copy(text)), sum);
	art_hex(sum, sizeof(sum), hex);
	jv_free(text);
}

/* 0 when line is an exchange, its key in key; -1 with err saying what
 * it lacks. */
static int
check(const jv *line, char key[ART_EXCHANGE_KEY_LEN + 1],
    struct art_err *err)
{
	const char *type = art_json_str(line, "type");
	jv resp = art_json_field(line, "response");
	jv e = art_json_field(line, "error"), req;
	int one = (jv_get_kind(resp) == JV_KIND_OBJECT) +
	    (jv_get_kind(e) == JV_KIND_OBJECT);

	jv_free(resp);
	jv_free(e);
	if (type == NULL || strcmp(type, "llm.exchange") != 0)
		return art_err_set(err, "bad_cassette", "not an llm.exchange "
		    "line");
	if (art_json_str(line, "model") == NULL)
		return art_err_set(err, "bad_cassette", "no model");
	if (one != 1)
		return art_err_set(err, "bad_cassette", "needs one of "
		    "'response' and 'error'");
	req = art_json_field(line, "request");
	art_cassette_key(art_json_str(line, "model"), &req, key);
	jv_free(req);
	return 0;
}

struct art_cassette *
art_cassette_load(const char *path, struct art_err *err)
{
	struct art_cassette *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	if ((c->e = art_exchanges_load(path, "cassette", "bad_cassette", check,
	    err)) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

void
art_cassette_free(struct art_cassette *c)
{
	if (c == NULL)
		return;
	art_exchanges_free(c->e);
	free(c);
}

size_t
art_cassette_size(const struct art_cassette *c)
{
	return art_exchanges_size(c->e);
}

jv
art_cassette_next(struct art_cassette *c, const char *model,
    const jv *request)
{
	char key[ART_CASSETTE_KEY_LEN + 1];

	art_cassette_key(model, request, key);
	return art_exchanges_next(c->e, key);
}

jv
art_cassette_line(const char *model, const jv *request, bool stream,
    const jv *deltas, const jv *response, const jv *error)
{
	char key[ART_CASSETTE_KEY_LEN + 1];
	jv l = jv_object();

	art_cassette_key(model, request, key);
	l = jv_object_set(l, jv_string("type"), jv_string("llm.exchange"));
	l = jv_object_set(l, jv_string("key"), jv_string(key));
	l = jv_object_set(l, jv_string("model"), jv_string(model));
	l = jv_object_set(l, jv_string("request"), jv_copy(*request));
	l = jv_object_set(l, jv_string("stream"), jv_bool(stream));
	l = jv_object_set(l, jv_string("deltas"), jv_copy(*deltas));
	if (jv_get_kind(*error) == JV_KIND_OBJECT)
		return jv_object_set(l, jv_string("error"), jv_copy(*error));
	return jv_object_set(l, jv_string("response"), jv_copy(*response));
}

int
art_cassette_append(int fd, const jv *line, struct art_err *err)
{
	return art_exchanges_append(fd, line, "cassette", err);
}
