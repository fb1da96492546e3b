/* json.c - typed access, canonical text and equality over libjq's jv */
#include "json.h"

#include <math.h>
#include <string.h>

/* 2^53 - 1: above it, a double no longer tells neighbours apart. */
#define MAX_EXACT	9007199254740991.0

const char *
art_json_kind_name(jv_kind k)
{
	switch (k) {
	case JV_KIND_INVALID:	return "invalid";
	case JV_KIND_NULL:	return "null";
	case JV_KIND_FALSE:
	case JV_KIND_TRUE:	return "boolean";
	case JV_KIND_NUMBER:	return "number";
	case JV_KIND_STRING:	return "string";
	case JV_KIND_ARRAY:	return "array";
	case JV_KIND_OBJECT:	return "object";
	}
	return "unknown";
}

jv
art_json_field(const jv *obj, const char *key)
{
	jv v;

	if (jv_get_kind(*obj) != JV_KIND_OBJECT)
		return jv_null();
	v = jv_object_get(jv_copy(*obj), jv_string(key));
	return jv_is_valid(v) ? v : (jv_free(v), jv_null());
}

const char *
art_json_str(const jv *obj, const char *key)
{
	jv v = art_json_field(obj, key);
	const char *s = jv_get_kind(v) == JV_KIND_STRING ?
	    jv_string_value(v) : NULL;

	jv_free(v);	/* obj still holds the string, so s stays valid */
	return s;
}

/*
 * The field, if present: 1 found (*v owned by the caller), 0 absent or
 * null and not required, -1 missing and required.
 */
static int
lookup(const jv *obj, const char *key, int required, jv *v,
    struct art_err *err)
{
	*v = art_json_field(obj, key);
	if (jv_get_kind(*v) != JV_KIND_NULL)
		return 1;
	jv_free(*v);
	if (required)
		return art_err_set(err, "bad_field", "missing field '%s'", key);
	return 0;
}

static int
wrong_kind(jv v, const char *key, const char *want, struct art_err *err)
{
	art_err_set(err, "bad_field", "field '%s': expected %s, got %s", key,
	    want, art_json_kind_name(jv_get_kind(v)));
	jv_free(v);
	return -1;
}

int
art_json_get_str(const jv *obj, const char *key, int required,
    const char **out, struct art_err *err)
{
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != JV_KIND_STRING)
		return wrong_kind(v, key, "string", err);
	*out = jv_string_value(v);
	jv_free(v);	/* obj still holds the string */
	return 0;
}

int
art_json_get_int(const jv *obj, const char *key, int required,
    int64_t *out, struct art_err *err)
{
	double d;
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != JV_KIND_NUMBER)
		return wrong_kind(v, key, "integer", err);
	d = jv_number_value(v);
	jv_free(v);
	if (d != floor(d) || fabs(d) > MAX_EXACT)
		return art_err_set(err, "bad_field", "field '%s': expected an "
		    "integer, got %g", key, d);
	*out = (int64_t)d;
	return 0;
}

int
art_json_get_bool(const jv *obj, const char *key, int required, int *out,
    struct art_err *err)
{
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != JV_KIND_TRUE && jv_get_kind(v) != JV_KIND_FALSE)
		return wrong_kind(v, key, "boolean", err);
	*out = jv_get_kind(v) == JV_KIND_TRUE;
	jv_free(v);
	return 0;
}

int
art_json_get_kind(const jv *obj, const char *key, jv_kind kind,
    int required, jv *out, struct art_err *err)
{
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != kind)
		return wrong_kind(v, key, art_json_kind_name(kind), err);
	*out = v;
	return 0;
}

jv
art_json_parse(const char *text, size_t len, struct art_err *err)
{
	jv v, msg;
	char why[200] = "parse error";
	const char *cut;

	if (len > 0x7fffffff) {
		art_err_set(err, "bad_json", "JSON text too long (%zu bytes)",
		    len);
		return jv_invalid();
	}
	v = jv_parse_sized(text, (int)len);
	if (jv_is_valid(v))
		return v;
	msg = jv_invalid_get_msg(v);
	if (jv_get_kind(msg) == JV_KIND_STRING) {
		snprintf(why, sizeof(why), "%s", jv_string_value(msg));
		if ((cut = strstr(why, " (while parsing")) != NULL)
			why[cut - why] = '\0';
	}
	jv_free(msg);
	art_err_set(err, "bad_json", "not valid JSON: %s", why);
	return jv_invalid();
}

jv
art_json_parse_str(const char *text, struct art_err *err)
{
	return art_json_parse(text, strlen(text), err);
}

jv
art_json_canon(jv v)
{
	return jv_dump_string(v, JV_PRINT_SORTED);
}

int
art_json_equal(const jv *a, const jv *b)
{
	/* jv_equal compares objects by key set, numbers by value. */
	return jv_equal(jv_copy(*a), jv_copy(*b));
}
