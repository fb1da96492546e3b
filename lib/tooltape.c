/* tooltape.c - tool calls' answers kept in a file and played back
 *
 * The model is cassette.c, for model calls: the same file discipline, the
 * same key (SHA-256 of canonical JSON), the same order of play.  A tool
 * call is only a name and its arguments, so that pair is the key.
 */
#include "tooltape.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exchanges.h"
#include "json.h"
#include "sha.h"

struct art_tooltape {
	struct art_exchanges	*e;
};

jv
art_tooltape_args(const jv *trigger)
{
	jv in = art_json_field(trigger, "input");
	jv v = art_json_field(&in, "value");
	const char *text = art_json_str(trigger, "arguments");

	jv_free(in);
	if (jv_get_kind(v) == JV_KIND_OBJECT)
		return v;
	jv_free(v);
	if (text == NULL)
		return art_json_field(trigger, "arguments");
	v = art_json_parse_str(text, NULL);
	if (jv_get_kind(v) == JV_KIND_OBJECT)
		return v;
	jv_free(v);
	return jv_string(text);
}

void
art_tooltape_key(const char *name, const jv *args,
    char hex[ART_TOOLTAPE_KEY_LEN + 1])
{
	unsigned char sum[ART_SHA256_LEN];
	jv pair = jv_array_append(jv_array_append(jv_array(),
	    jv_string(name)), jv_copy(*args));
	jv text = art_json_canon(pair);

	art_sha256(jv_string_value(text),
	    (size_t)jv_string_length_bytes(jv_copy(text)), sum);
	art_hex(sum, sizeof(sum), hex);
	jv_free(text);
}

/* Whether line (borrowed) has the field key, null or not. */
static bool
has(const jv *line, const char *key)
{
	return jv_get_kind(*line) == JV_KIND_OBJECT &&
	    jv_object_has(jv_copy(*line), jv_string(key));
}

/* 0 when error (borrowed) is {"error":"...","retryable":B}, B optional. */
static int
check_error(const jv *error, struct art_err *err)
{
	jv r = art_json_field(error, "retryable");
	jv_kind k = jv_get_kind(r);

	jv_free(r);
	if (jv_get_kind(*error) != JV_KIND_OBJECT ||
	    art_json_str(error, "error") == NULL)
		return art_err_set(err, "bad_tape", "field 'error': expected "
		    "{\"error\":STRING,\"retryable\":BOOLEAN}");
	if (k != JV_KIND_NULL && k != JV_KIND_TRUE && k != JV_KIND_FALSE)
		return art_err_set(err, "bad_tape", "field 'error': "
		    "'retryable' is not a boolean");
	return 0;
}

/* 0 when line is an exchange, its key in key; -1 with err saying what
 * it lacks. */
static int
check(const jv *line, char key[ART_EXCHANGE_KEY_LEN + 1],
    struct art_err *err)
{
	const char *type = art_json_str(line, "type");
	const char *name = art_json_str(line, "name");
	jv e, args;
	int r = 0;

	if (type == NULL || strcmp(type, "tool.exchange") != 0)
		return art_err_set(err, "bad_tape", "not a tool.exchange line");
	if (name == NULL || *name == '\0')
		return art_err_set(err, "bad_tape", "no tool name");
	if (has(line, "result") == has(line, "error"))
		return art_err_set(err, "bad_tape", "needs one of 'result' and "
		    "'error'");
	if (has(line, "error")) {
		e = art_json_field(line, "error");
		r = check_error(&e, err);
		jv_free(e);
	}
	args = art_json_field(line, "arguments");
	art_tooltape_key(name, &args, key);
	jv_free(args);
	return r;
}

struct art_tooltape *
art_tooltape_load(const char *path, struct art_err *err)
{
	struct art_tooltape *t;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	if ((t->e = art_exchanges_load(path, "tape", "bad_tape", check,
	    err)) == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

void
art_tooltape_free(struct art_tooltape *t)
{
	if (t == NULL)
		return;
	art_exchanges_free(t->e);
	free(t);
}

size_t
art_tooltape_size(const struct art_tooltape *t)
{
	return art_exchanges_size(t->e);
}

jv
art_tooltape_next(struct art_tooltape *t, const char *name, const jv *args)
{
	char key[ART_TOOLTAPE_KEY_LEN + 1];

	art_tooltape_key(name, args, key);
	return art_exchanges_next(t->e, key);
}

/* {"error":MSG,"retryable":B} of a tool.error (borrowed). */
static jv
error_of(const jv *answer)
{
	jv msg = art_json_field(answer, "error");
	jv r = art_json_field(answer, "retryable");
	jv e = jv_object();

	if (jv_get_kind(msg) != JV_KIND_STRING) {
		jv_free(msg);
		msg = jv_string("tool error");
	}
	e = jv_object_set(e, jv_string("error"), msg);
	return jv_object_set(e, jv_string("retryable"),
	    jv_bool(jv_get_kind(r) == JV_KIND_TRUE));
}

jv
art_tooltape_line(const char *name, const jv *args, const jv *answer)
{
	char key[ART_TOOLTAPE_KEY_LEN + 1];
	const char *type = art_json_str(answer, "type");
	bool ok = type != NULL && strcmp(type, "tool.result") == 0;
	jv l;

	if (!ok && (type == NULL || strcmp(type, "tool.error") != 0))
		return jv_invalid();
	art_tooltape_key(name, args, key);
	l = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("tool.exchange"));
	l = jv_object_set(l, jv_string("key"), jv_string(key));
	l = jv_object_set(l, jv_string("name"), jv_string(name));
	l = jv_object_set(l, jv_string("arguments"), jv_copy(*args));
	if (ok)
		return jv_object_set(l, jv_string("result"),
		    art_json_field(answer, "result"));
	return jv_object_set(l, jv_string("error"), error_of(answer));
}

jv
art_tooltape_action(const jv *line)
{
	bool ok = !has(line, "error");
	jv a = jv_object_set(jv_object(), jv_string("type"),
	    jv_string(ok ? "tool.result" : "tool.error"));
	jv e, r;

	if (ok)
		return jv_object_set(a, jv_string("result"),
		    art_json_field(line, "result"));
	e = art_json_field(line, "error");
	a = jv_object_set(a, jv_string("error"), art_json_field(&e, "error"));
	r = art_json_field(&e, "retryable");
	a = jv_object_set(a, jv_string("retryable"),
	    jv_bool(jv_get_kind(r) == JV_KIND_TRUE));
	jv_free(r);
	jv_free(e);
	return a;
}

int
art_tooltape_append(int fd, const jv *line, struct art_err *err)
{
	return art_exchanges_append(fd, line, "tape", err);
}
