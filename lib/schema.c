/* schema.c - JSON Schema validation over jv, for tool declarations
 *
 * Two walks.  The first reads the schema alone: every subschema a
 * supported keyword reaches, each local $ref's target included (once per
 * $ref string, so a recursive schema ends), is checked for keyword values
 * of the right shape and patterns that compile.  Told to list instead, the
 * same walk gathers the keywords nothing here implements, going into the
 * subschemas of the unsupported applicators too, and checks nothing.  The
 * second walk reads the schema and the value together, and can trust every
 * keyword it meets, because the first has seen them all; what is left for
 * it to find in the schema is a $ref loop, which needs a value to show.
 *
 * Keys are visited sorted (jv_keys), never in jv's hash order, so the
 * first violation is the same on every run.
 */
#include "schema.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "json.h"
#include "regex.h"

#define PATH_SIZE	512	/* a longer path is cut short in messages */

/* --- JSON Pointers -------------------------------------------------- */

struct path {
	char	buf[PATH_SIZE];
	size_t	len;
	int	depth;		/* segments pushed */
};

static void
path_init(struct path *p, const char *start)
{
	p->len = 0;
	p->depth = 0;
	p->buf[0] = '\0';
	while (*start != '\0' && p->len < sizeof(p->buf) - 1)
		p->buf[p->len++] = *start++;
	p->buf[p->len] = '\0';
}

static void
path_put(struct path *p, const char *s, size_t n)
{
	if (n > sizeof(p->buf) - 1 - p->len)
		n = sizeof(p->buf) - 1 - p->len;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

/* Appends "/" and key[0..n) escaped; returns the length to pop back to. */
static size_t
path_push(struct path *p, const char *key, size_t n)
{
	size_t was = p->len, i;

	path_put(p, "/", 1);
	for (i = 0; i < n; i++) {
		if (key[i] == '~')
			path_put(p, "~0", 2);
		else if (key[i] == '/')
			path_put(p, "~1", 2);
		else
			path_put(p, key + i, 1);
	}
	p->depth++;
	return was;
}

/* As path_push(), for a jv string key (borrowed). */
static size_t
path_push_key(struct path *p, const jv *key)
{
	return path_push(p, jv_string_value(*key),
	    (size_t)jv_string_length_bytes(jv_copy(*key)));
}

static size_t
path_push_index(struct path *p, int i)
{
	char b[16];
	int n = snprintf(b, sizeof(b), "%d", i);

	return path_push(p, b, (size_t)n);
}

static void
path_pop(struct path *p, size_t was)
{
	p->len = was;
	p->buf[was] = '\0';
	p->depth--;
}

/* A value's path as messages write it: "/" for the value itself. */
static const char *
where(const struct path *p)
{
	return p->len > 0 ? p->buf : "/";
}

static bool
is_local_ref(const char *ref)
{
	return ref[0] == '#' && (ref[1] == '\0' || ref[1] == '/');
}

/* Undoes a URI fragment's %XX in place; -1 on a bad escape. */
static int
percent_decode(char *s)
{
	char *out = s;
	int hi, lo;

	for (; *s != '\0'; s++) {
		if (*s != '%') {
			*out++ = *s;
			continue;
		}
		if ((hi = art_hex_value(s[1])) < 0 ||
		    (lo = art_hex_value(s[2])) < 0)
			return -1;
		*out++ = (char)(hi << 4 | lo);
		s += 2;
	}
	*out = '\0';
	return 0;
}

/* Undoes ~1 and ~0 in tok[0..*n) in place; -1 on any other '~'. */
static int
tilde_decode(char *tok, size_t *n)
{
	size_t i, o = 0;

	for (i = 0; i < *n; i++) {
		if (tok[i] != '~') {
			tok[o++] = tok[i];
			continue;
		}
		if (i + 1 == *n || (tok[i + 1] != '0' && tok[i + 1] != '1'))
			return -1;
		tok[o++] = tok[++i] == '0' ? '~' : '/';
	}
	*n = o;
	return 0;
}

/* at's member named by tok[0..n); consumes at.  jv_invalid() if none. */
static jv
step(jv at, const char *tok, size_t n)
{
	size_t i;
	int idx = 0;

	if (jv_get_kind(at) == JV_KIND_OBJECT)
		return jv_object_get(at, jv_string_sized(tok, (int)n));
	if (jv_get_kind(at) != JV_KIND_ARRAY || n == 0 || n > 9 ||
	    (n > 1 && tok[0] == '0')) {
		jv_free(at);
		return jv_invalid();
	}
	for (i = 0; i < n; i++) {
		if (tok[i] < '0' || tok[i] > '9') {
			jv_free(at);
			return jv_invalid();
		}
		idx = idx * 10 + (tok[i] - '0');
	}
	return jv_array_get(at, idx);	/* invalid when out of range */
}

/*
 * The subschema of root (borrowed) that the local $ref names, in *out.
 * -1 with err "bad_schema" ("'#/x' does not resolve") or "nomem".
 */
static int
resolve(const jv *root, const char *ref, jv *out, struct art_err *err)
{
	char *ptr, *tok, *end;
	size_t n;
	jv at;

	if ((ptr = strdup(ref + 1)) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	at = jv_copy(*root);
	if (percent_decode(ptr) == -1) {
		jv_free(at);
		at = jv_invalid();
	}
	for (tok = ptr; jv_is_valid(at) && *tok == '/'; tok = end) {
		tok++;
		if ((end = strchr(tok, '/')) == NULL)
			end = tok + strlen(tok);
		n = (size_t)(end - tok);
		if (tilde_decode(tok, &n) == -1) {
			jv_free(at);
			at = jv_invalid();
		} else
			at = step(at, tok, n);
	}
	free(ptr);
	if (!jv_is_valid(at)) {
		jv_free(at);
		return art_err_set(err, "bad_schema", "'%s' does not resolve",
		    ref);
	}
	*out = at;
	return 0;
}

/* --- the schema alone: checking and listing --------------------------- */

enum shape {
	ANNOTATION,	/* says something, asserts nothing */
	SCHEMA,
	SCHEMA_MAP,	/* an object of schemas */
	SCHEMA_LIST,	/* an array of schemas */
	ITEMS,		/* a schema, or an array of them (a tuple) */
	TYPES,		/* a type name, or an array of them */
	COUNT,		/* a non-negative integer */
	NUMBER,
	DIVISOR,	/* a number above 0 */
	NAMES,		/* an array of strings */
	BOOLEAN,
	ARRAY,		/* an array of anything */
	ANY,
	PATTERN,	/* a string regcomp takes */
	REF		/* a string: local pointers are followed */
};

static const struct keyword {
	const char	*name;
	enum shape	 shape;
	bool		 supported;
} keywords[] = {
	{ "$comment",			ANNOTATION,	true },
	{ "$defs",			SCHEMA_MAP,	true },
	{ "$id",			ANNOTATION,	true },
	{ "$ref",			REF,		true },
	{ "$schema",			ANNOTATION,	true },
	{ "additionalItems",		SCHEMA,		true },
	{ "additionalProperties",	SCHEMA,		true },
	{ "allOf",			SCHEMA_LIST,	true },
	{ "anyOf",			SCHEMA_LIST,	true },
	{ "const",			ANY,		true },
	{ "contains",			SCHEMA,		false },
	{ "contentEncoding",		ANNOTATION,	true },
	{ "contentMediaType",		ANNOTATION,	true },
	{ "contentSchema",		ANNOTATION,	true },
	{ "default",			ANNOTATION,	true },
	{ "definitions",		SCHEMA_MAP,	true },
	{ "dependencies",		SCHEMA_MAP,	false },
	{ "dependentSchemas",		SCHEMA_MAP,	false },
	{ "deprecated",			ANNOTATION,	true },
	{ "description",		ANNOTATION,	true },
	{ "else",			SCHEMA,		false },
	{ "enum",			ARRAY,		true },
	{ "examples",			ANNOTATION,	true },
	{ "exclusiveMaximum",		NUMBER,		true },
	{ "exclusiveMinimum",		NUMBER,		true },
	{ "format",			ANNOTATION,	true },
	{ "if",				SCHEMA,		false },
	{ "items",			ITEMS,		true },
	{ "maxItems",			COUNT,		true },
	{ "maxLength",			COUNT,		true },
	{ "maxProperties",		COUNT,		true },
	{ "maximum",			NUMBER,		true },
	{ "minItems",			COUNT,		true },
	{ "minLength",			COUNT,		true },
	{ "minProperties",		COUNT,		true },
	{ "minimum",			NUMBER,		true },
	{ "multipleOf",			DIVISOR,	true },
	{ "not",			SCHEMA,		true },
	{ "oneOf",			SCHEMA_LIST,	true },
	{ "pattern",			PATTERN,	true },
	{ "patternProperties",		SCHEMA_MAP,	false },
	{ "prefixItems",		SCHEMA_LIST,	true },
	{ "properties",			SCHEMA_MAP,	true },
	{ "propertyNames",		SCHEMA,		false },
	{ "readOnly",			ANNOTATION,	true },
	{ "required",			NAMES,		true },
	{ "then",			SCHEMA,		false },
	{ "title",			ANNOTATION,	true },
	{ "type",			TYPES,		true },
	{ "unevaluatedItems",		SCHEMA,		false },
	{ "unevaluatedProperties",	SCHEMA,		false },
	{ "uniqueItems",		BOOLEAN,	true },
	{ "writeOnly",			ANNOTATION,	true },
};

static const char *const type_names[] = {
	"array", "boolean", "integer", "null", "number", "object", "string",
};

struct walk {
	const jv	*root;
	bool		 list;		/* gather what is unsupported */
	jv		 found;		/* listing: keywords, as keys */
	jv		 seen;		/* $ref strings followed */
	struct art_err	*err;
};

static int	walk(struct walk *, const jv *, struct path *);

static const struct keyword *
find_keyword(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strcmp(keywords[i].name, name) == 0)
			return &keywords[i];
	return NULL;
}

static bool
is_type_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strcmp(type_names[i], name) == 0)
			return true;
	return false;
}

/* A schema fault at p; listing looks past faults, so it returns 0 then. */
static int __attribute__((format(printf, 3, 4)))
fault(struct walk *w, const struct path *p, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	if (w->list)
		return 0;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return art_err_set(w->err, "bad_schema", "%s: %s", p->buf, why);
}

/* A number as its JSON text, anything else as its kind's name. */
static const char *
describe(const jv *v, char *buf, size_t size)
{
	jv d;

	if (jv_get_kind(*v) != JV_KIND_NUMBER)
		return art_json_kind_name(jv_get_kind(*v));
	d = jv_dump_string(jv_copy(*v), 0);
	snprintf(buf, size, "%s", jv_string_value(d));
	jv_free(d);
	return buf;
}

static int
walk_map(struct walk *w, const jv *v, struct path *p)
{
	jv keys, sub;
	size_t was;
	int rc = 0;

	if (jv_get_kind(*v) != JV_KIND_OBJECT)
		return fault(w, p, "expected an object of schemas, got %s",
		    art_json_kind_name(jv_get_kind(*v)));
	keys = jv_keys(jv_copy(*v));
	jv_array_foreach(keys, i, k) {
		sub = jv_object_get(jv_copy(*v), jv_copy(k));
		was = path_push_key(p, &k);
		rc = walk(w, &sub, p);
		path_pop(p, was);
		jv_free(sub);
		jv_free(k);
		if (rc != 0)
			break;
	}
	jv_free(keys);
	return rc;
}

static int
walk_list(struct walk *w, const jv *v, struct path *p)
{
	size_t was;
	int rc = 0;

	if (jv_get_kind(*v) != JV_KIND_ARRAY)
		return fault(w, p, "expected an array of schemas, got %s",
		    art_json_kind_name(jv_get_kind(*v)));
	jv_array_foreach(*v, i, sub) {
		was = path_push_index(p, i);
		rc = walk(w, &sub, p);
		path_pop(p, was);
		jv_free(sub);
		if (rc != 0)
			break;
	}
	return rc;
}

static int
check_type_name(struct walk *w, const jv *t, struct path *p)
{
	if (jv_get_kind(*t) != JV_KIND_STRING)
		return fault(w, p, "expected a type name, got %s",
		    art_json_kind_name(jv_get_kind(*t)));
	if (!is_type_name(jv_string_value(*t)))
		return fault(w, p, "unknown type '%s'", jv_string_value(*t));
	return 0;
}

static int
check_types(struct walk *w, const jv *v, struct path *p)
{
	size_t was;
	int rc = 0;

	if (jv_get_kind(*v) != JV_KIND_ARRAY)
		return check_type_name(w, v, p);
	jv_array_foreach(*v, i, t) {
		was = path_push_index(p, i);
		rc = check_type_name(w, &t, p);
		path_pop(p, was);
		jv_free(t);
		if (rc != 0)
			break;
	}
	return rc;
}

static int
check_names(struct walk *w, const jv *v, struct path *p)
{
	size_t was;
	int rc = 0;

	if (jv_get_kind(*v) != JV_KIND_ARRAY)
		return fault(w, p, "expected an array of strings, got %s",
		    art_json_kind_name(jv_get_kind(*v)));
	jv_array_foreach(*v, i, s) {
		if (jv_get_kind(s) != JV_KIND_STRING) {
			was = path_push_index(p, i);
			rc = fault(w, p, "expected a string, got %s",
			    art_json_kind_name(jv_get_kind(s)));
			path_pop(p, was);
		}
		jv_free(s);
		if (rc != 0)
			break;
	}
	return rc;
}

static int
check_number(struct walk *w, const jv *v, enum shape shape, struct path *p)
{
	char buf[64];
	double d;

	if (jv_get_kind(*v) == JV_KIND_NUMBER) {
		d = jv_number_value(*v);
		if (shape == NUMBER && !isnan(d))
			return 0;
		if (shape == DIVISOR && d > 0 && isfinite(d))
			return 0;
		if (shape == COUNT && d >= 0 && d == floor(d) && isfinite(d))
			return 0;
	}
	return fault(w, p, "expected %s, got %s", shape == NUMBER ?
	    "a number" : shape == DIVISOR ? "a number above 0" :
	    "a non-negative integer", describe(v, buf, sizeof(buf)));
}

static int
check_pattern(struct walk *w, const jv *v, struct path *p)
{
	struct art_regex *re;
	struct art_err e;

	if (jv_get_kind(*v) != JV_KIND_STRING)
		return fault(w, p, "expected a string, got %s",
		    art_json_kind_name(jv_get_kind(*v)));
	if (w->list)
		return 0;
	if (art_regex_new(jv_string_value(*v), jv_string_length_bytes(
	    jv_copy(*v)), ART_REGEX_NOJIT, &re, &e) == -1)
		return fault(w, p, "bad regular expression: %s", e.msg);
	art_regex_free(re);
	return 0;
}

/* Walks a local $ref's target, once per $ref string, where it lives. */
static int
follow(struct walk *w, const char *ref, struct path *p)
{
	struct art_err e;
	struct path at;
	jv target;
	int rc;

	if (jv_object_has(jv_copy(w->seen), jv_string(ref)))
		return 0;
	w->seen = jv_object_set(w->seen, jv_string(ref), jv_true());
	if (resolve(w->root, ref, &target, &e) == -1) {
		if (art_err_is(&e, "bad_schema") || w->list)
			return fault(w, p, "%s", e.msg);
		*w->err = e;		/* nomem */
		return -1;
	}
	path_init(&at, ref);
	rc = walk(w, &target, &at);
	jv_free(target);
	return rc;
}

static int
check_ref(struct walk *w, const jv *v, struct path *p)
{
	if (jv_get_kind(*v) != JV_KIND_STRING)
		return fault(w, p, "expected a string, got %s",
		    art_json_kind_name(jv_get_kind(*v)));
	if (is_local_ref(jv_string_value(*v)))
		return follow(w, jv_string_value(*v), p);
	if (w->list)
		w->found = jv_object_set(w->found, jv_string("$ref"),
		    jv_true());
	return 0;
}

/* One keyword's value v, at p (which already names the keyword). */
static int
check_keyword(struct walk *w, enum shape shape, const jv *v, struct path *p)
{
	switch (shape) {
	case SCHEMA:
		return walk(w, v, p);
	case SCHEMA_MAP:
		return walk_map(w, v, p);
	case ITEMS:
		if (jv_get_kind(*v) != JV_KIND_ARRAY)
			return walk(w, v, p);
		/* FALLTHROUGH */
	case SCHEMA_LIST:
		return walk_list(w, v, p);
	case TYPES:
		return check_types(w, v, p);
	case COUNT:
	case NUMBER:
	case DIVISOR:
		return check_number(w, v, shape, p);
	case NAMES:
		return check_names(w, v, p);
	case BOOLEAN:
		if (jv_get_kind(*v) == JV_KIND_TRUE ||
		    jv_get_kind(*v) == JV_KIND_FALSE)
			return 0;
		return fault(w, p, "expected a boolean, got %s",
		    art_json_kind_name(jv_get_kind(*v)));
	case ARRAY:
		if (jv_get_kind(*v) == JV_KIND_ARRAY)
			return 0;
		return fault(w, p, "expected an array, got %s",
		    art_json_kind_name(jv_get_kind(*v)));
	case PATTERN:
		return check_pattern(w, v, p);
	case REF:
		return check_ref(w, v, p);
	case ANNOTATION:
	case ANY:
		break;
	}
	return 0;
}

static int
walk_keyword(struct walk *w, const jv *name, const jv *v, struct path *p)
{
	const struct keyword *kw = find_keyword(jv_string_value(*name));
	size_t was;
	int rc;

	if ((kw == NULL || !kw->supported) && w->list)
		w->found = jv_object_set(w->found, jv_copy(*name), jv_true());
	/* Listing goes on into an unsupported applicator's schemas. */
	if (kw == NULL || (!kw->supported && !w->list) ||
	    kw->shape == ANNOTATION)
		return 0;
	was = path_push_key(p, name);
	rc = check_keyword(w, kw->shape, v, p);
	path_pop(p, was);
	return rc;
}

static int
walk(struct walk *w, const jv *s, struct path *p)
{
	jv keys, v;
	int rc = 0;

	if (jv_get_kind(*s) == JV_KIND_TRUE ||
	    jv_get_kind(*s) == JV_KIND_FALSE)
		return 0;
	if (jv_get_kind(*s) != JV_KIND_OBJECT)
		return fault(w, p, "expected a schema (object or boolean), "
		    "got %s", art_json_kind_name(jv_get_kind(*s)));
	keys = jv_keys(jv_copy(*s));
	jv_array_foreach(keys, i, k) {
		v = jv_object_get(jv_copy(*s), jv_copy(k));
		rc = walk_keyword(w, &k, &v, p);
		jv_free(v);
		jv_free(k);
		if (rc != 0)
			break;
	}
	jv_free(keys);
	return rc;
}

int
art_schema_check(const jv *schema, struct art_err *err)
{
	struct art_err scratch;
	struct walk w = { schema, false, jv_invalid(), jv_object(),
	    err != NULL ? err : &scratch };
	struct path p;
	int rc;

	path_init(&p, "#");
	rc = walk(&w, schema, &p);
	jv_free(w.seen);
	return rc;
}

jv
art_schema_unsupported(const jv *schema)
{
	struct art_err scratch;
	struct walk w = { schema, true, jv_object(), jv_object(), &scratch };
	struct path p;

	path_init(&p, "#");
	walk(&w, schema, &p);
	jv_free(w.seen);
	return jv_keys(w.found);
}

/* --- the value against the schema ------------------------------------- */

enum { OK = 0, NO = 1, BAD = -1 };

struct hop {
	const char	*ref;		/* borrowed from the root */
	int		 depth;		/* the value path's depth */
};

struct run {
	const jv	*root;
	struct path	 at;		/* the value's JSON Pointer */
	struct hop	 hops[ART_SCHEMA_MAX_DEPTH];
	int		 nhops;
	struct art_err	*err;		/* never NULL */
};

typedef int check_fn(struct run *, const jv *, const jv *);

static int	validate(struct run *, const jv *, const jv *);

/* A violation at the value's current place: fills err, returns NO. */
static int __attribute__((format(printf, 2, 3)))
no(struct run *r, const char *fmt, ...)
{
	char why[224];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	art_err_set(r->err, "invalid", "%s: %s", where(&r->at), why);
	return NO;
}

/* Validates without a message, for anyOf, oneOf and not; BAD still has one. */
static int
quietly(struct run *r, const jv *s, const jv *v)
{
	struct art_err *keep = r->err;
	struct art_err scratch;
	int rc;

	r->err = &scratch;
	rc = validate(r, s, v);
	r->err = keep;
	if (rc == BAD)
		*keep = scratch;
	return rc;
}

/* s's keyword, or jv_invalid() when s has none. */
static jv
keyword(const jv *s, const char *name)
{
	return jv_object_get(jv_copy(*s), jv_string(name));
}

static bool
is_kind(const jv *v, jv_kind k)
{
	return jv_get_kind(*v) == k;
}

/* A growing message, cut short at its size. */
struct text {
	char	buf[200];
	size_t	len;
};

static void
text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (n > sizeof(t->buf) - 1 - t->len)
		n = sizeof(t->buf) - 1 - t->len;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

/* Appends v's JSON text. */
static void
text_add_json(struct text *t, const jv *v)
{
	jv d = jv_dump_string(jv_copy(*v), 0);

	text_add(t, jv_string_value(d));
	jv_free(d);
}

static bool
is_integer(double d)
{
	return isfinite(d) && d == floor(d);
}

static bool
has_type(const char *name, const jv *v)
{
	jv_kind k = jv_get_kind(*v);

	if (strcmp(name, "integer") == 0)
		return k == JV_KIND_NUMBER && is_integer(jv_number_value(*v));
	if (strcmp(name, "boolean") == 0)
		return k == JV_KIND_TRUE || k == JV_KIND_FALSE;
	return strcmp(name, art_json_kind_name(k)) == 0;
}

static int
check_type(struct run *r, const jv *s, const jv *v)
{
	jv t = keyword(s, "type");
	struct text want = { "", 0 };
	bool match = false;
	int rc = OK;

	if (is_kind(&t, JV_KIND_STRING)) {
		match = has_type(jv_string_value(t), v);
		text_add(&want, jv_string_value(t));
	} else if (is_kind(&t, JV_KIND_ARRAY)) {
		jv_array_foreach(t, i, name) {
			match = match || has_type(jv_string_value(name), v);
			if (i > 0)
				text_add(&want, " or ");
			text_add(&want, jv_string_value(name));
			jv_free(name);
		}
	} else
		match = true;
	if (!match)
		rc = no(r, "expected %s, got %s", want.buf,
		    art_json_kind_name(jv_get_kind(*v)));
	jv_free(t);
	return rc;
}

static int
check_enum(struct run *r, const jv *s, const jv *v)
{
	jv e = keyword(s, "enum");
	struct text want = { "", 0 };
	bool match = false;
	int rc = OK;

	if (!is_kind(&e, JV_KIND_ARRAY)) {
		jv_free(e);
		return OK;
	}
	jv_array_foreach(e, i, x) {
		match = match || art_json_equal(&x, v);
		if (i > 0)
			text_add(&want, ", ");
		text_add_json(&want, &x);
		jv_free(x);
	}
	if (!match)
		rc = no(r, "expected one of %s", want.buf);
	jv_free(e);
	return rc;
}

static int
check_const(struct run *r, const jv *s, const jv *v)
{
	jv c = keyword(s, "const");
	struct text want = { "", 0 };
	int rc = OK;

	if (jv_is_valid(c) && !art_json_equal(&c, v)) {
		text_add_json(&want, &c);
		rc = no(r, "expected %s", want.buf);
	}
	jv_free(c);
	return rc;
}

/* The number limits, in the order they are tried. */
static const struct limit {
	const char	*name;
	bool		 lower;		/* a least, not a most */
	bool		 strict;	/* the bound itself is out */
	const char	*says;
} limits[] = {
	{ "minimum",		true,	false,	"at least" },
	{ "exclusiveMinimum",	true,	true,	"more than" },
	{ "maximum",		false,	false,	"at most" },
	{ "exclusiveMaximum",	false,	true,	"less than" },
};

static bool
breaks(const struct limit *l, double d, double m)
{
	if (l->lower)
		return l->strict ? d <= m : d < m;
	return l->strict ? d >= m : d > m;
}

/* Whether d is a multiple of m (> 0), allowing for the division's rounding. */
static bool
is_multiple(double d, double m)
{
	double q = d / m;

	if (!isfinite(q))
		return fmod(d, m) == 0;
	return fabs(q - nearbyint(q)) <= 4 * DBL_EPSILON * fmax(1, fabs(q));
}

static int
check_number_value(struct run *r, const jv *s, const jv *v)
{
	struct text bound = { "", 0 };
	double d = jv_number_value(*v);
	size_t i;
	int rc = OK;
	jv m;

	for (i = 0; rc == OK && i < sizeof(limits) / sizeof(limits[0]); i++) {
		m = keyword(s, limits[i].name);
		if (is_kind(&m, JV_KIND_NUMBER) &&
		    breaks(&limits[i], d, jv_number_value(m))) {
			text_add_json(&bound, &m);
			rc = no(r, "expected %s %s", limits[i].says, bound.buf);
		}
		jv_free(m);
	}
	if (rc != OK)
		return rc;
	m = keyword(s, "multipleOf");
	if (is_kind(&m, JV_KIND_NUMBER) && jv_number_value(m) > 0 &&
	    !is_multiple(d, jv_number_value(m))) {
		text_add_json(&bound, &m);
		rc = no(r, "expected a multiple of %s", bound.buf);
	}
	jv_free(m);
	return rc;
}

/*
 * minName and maxName (minLength, minItems, minProperties) against n
 * things, each a unit ("character") or more (units).
 */
static int
check_count(struct run *r, const jv *s, const char *min_name,
    const char *max_name, int n, const char *unit, const char *units)
{
	jv lo = keyword(s, min_name), hi = keyword(s, max_name);
	double m;
	int rc = OK;

	if (is_kind(&lo, JV_KIND_NUMBER) && n < (m = jv_number_value(lo)))
		rc = no(r, "expected at least %.0f %s", m, m == 1 ? unit :
		    units);
	else if (is_kind(&hi, JV_KIND_NUMBER) && n > (m = jv_number_value(hi)))
		rc = no(r, "expected at most %.0f %s", m, m == 1 ? unit :
		    units);
	jv_free(lo);
	jv_free(hi);
	return rc;
}

/* The first walk compiled every pattern, so this one compiles too. */
static int
check_pattern_match(struct run *r, const jv *s, const jv *v)
{
	jv pat = keyword(s, "pattern");
	struct art_regex *re;
	struct art_err e;
	size_t a, b;
	int rc = OK, found;

	if (!is_kind(&pat, JV_KIND_STRING)) {
		jv_free(pat);
		return OK;
	}
	if (art_regex_new(jv_string_value(pat), jv_string_length_bytes(
	    jv_copy(pat)), ART_REGEX_NOJIT, &re, &e) == -1)
		rc = art_err_set(r->err, art_err_is(&e, "nomem") ? "nomem" :
		    "bad_schema", "pattern '%s': does not compile",
		    jv_string_value(pat));
	else {
		found = art_regex_search(re, jv_string_value(*v),
		    jv_string_length_bytes(jv_copy(*v)), 0, &a, &b);
		if (found == ART_REGEX_ERROR)
			rc = art_err_set(r->err, "bad_schema", "pattern '%s': "
			    "too costly to match", jv_string_value(pat));
		else if (found != ART_REGEX_MATCH)
			rc = no(r, "does not match %s", jv_string_value(pat));
		art_regex_free(re);
	}
	jv_free(pat);
	return rc;
}

static int
check_string_value(struct run *r, const jv *s, const jv *v)
{
	int rc;

	rc = check_count(r, s, "minLength", "maxLength",
	    jv_string_length_codepoints(jv_copy(*v)), "character",
	    "characters");
	return rc != OK ? rc : check_pattern_match(r, s, v);
}

static int
check_unique(struct run *r, const jv *s, const jv *v)
{
	jv u = keyword(s, "uniqueItems"), a, b;
	int n = jv_array_length(jv_copy(*v)), i, j, rc = OK;

	if (!is_kind(&u, JV_KIND_TRUE))
		n = 0;
	jv_free(u);
	for (i = 0; rc == OK && i < n; i++) {
		a = jv_array_get(jv_copy(*v), i);
		for (j = i + 1; rc == OK && j < n; j++) {
			b = jv_array_get(jv_copy(*v), j);
			if (art_json_equal(&a, &b))
				rc = no(r, "items %d and %d are equal", i, j);
			jv_free(b);
		}
		jv_free(a);
	}
	return rc;
}

/* Validates x (borrowed) against s at the value's step key or index. */
static int
validate_at(struct run *r, const jv *s, const jv *x, const jv *key, int i)
{
	size_t was = key != NULL ? path_push_key(&r->at, key) :
	    path_push_index(&r->at, i);
	int rc = validate(r, s, x);

	path_pop(&r->at, was);
	return rc;
}

static int
check_items(struct run *r, const jv *s, const jv *v)
{
	jv tuple = keyword(s, "prefixItems"), rest = keyword(s, "items"), sub;
	int ntuple, rc = OK;

	if (!is_kind(&tuple, JV_KIND_ARRAY)) {
		jv_free(tuple);
		tuple = rest;
		rest = is_kind(&tuple, JV_KIND_ARRAY) ?
		    keyword(s, "additionalItems") : jv_copy(tuple);
	}
	if (is_kind(&rest, JV_KIND_ARRAY)) {	/* prefixItems and items[] */
		jv_free(rest);
		rest = jv_invalid();
	}
	ntuple = is_kind(&tuple, JV_KIND_ARRAY) ?
	    jv_array_length(jv_copy(tuple)) : 0;
	jv_array_foreach(*v, i, x) {
		sub = i < ntuple ? jv_array_get(jv_copy(tuple), i) :
		    jv_copy(rest);
		if (jv_is_valid(sub))
			rc = validate_at(r, &sub, &x, NULL, i);
		jv_free(sub);
		jv_free(x);
		if (rc != OK)
			break;
	}
	jv_free(tuple);
	jv_free(rest);
	return rc;
}

static int
check_array_value(struct run *r, const jv *s, const jv *v)
{
	int rc;

	rc = check_count(r, s, "minItems", "maxItems",
	    jv_array_length(jv_copy(*v)), "item", "items");
	if (rc == OK)
		rc = check_unique(r, s, v);
	return rc != OK ? rc : check_items(r, s, v);
}

static int
check_required(struct run *r, const jv *s, const jv *v)
{
	jv req = keyword(s, "required");
	int rc = OK;

	if (is_kind(&req, JV_KIND_ARRAY)) {
		jv_array_foreach(req, i, name) {
			if (rc == OK && is_kind(&name, JV_KIND_STRING) &&
			    !jv_object_has(jv_copy(*v), jv_copy(name)))
				rc = no(r, "missing required property '%s'",
				    jv_string_value(name));
			jv_free(name);
		}
	}
	jv_free(req);
	return rc;
}

/* One property: its schema, else additionalProperties, if any. */
static int
check_property(struct run *r, const jv *props, const jv *extra,
    const jv *v, const jv *key)
{
	jv sub = jv_invalid(), x;
	int rc = OK;

	if (is_kind(props, JV_KIND_OBJECT))
		sub = jv_object_get(jv_copy(*props), jv_copy(*key));
	if (!jv_is_valid(sub)) {
		jv_free(sub);
		sub = jv_copy(*extra);
	}
	if (is_kind(&sub, JV_KIND_FALSE))
		rc = no(r, "property '%s' is not allowed",
		    jv_string_value(*key));
	else if (jv_is_valid(sub)) {
		x = jv_object_get(jv_copy(*v), jv_copy(*key));
		rc = validate_at(r, &sub, &x, key, 0);
		jv_free(x);
	}
	jv_free(sub);
	return rc;
}

static int
check_object_value(struct run *r, const jv *s, const jv *v)
{
	jv props, extra, keys;
	int rc;

	if ((rc = check_required(r, s, v)) != OK ||
	    (rc = check_count(r, s, "minProperties", "maxProperties",
	    jv_object_length(jv_copy(*v)), "property", "properties")) != OK)
		return rc;
	props = keyword(s, "properties");
	extra = keyword(s, "additionalProperties");
	keys = jv_keys(jv_copy(*v));
	jv_array_foreach(keys, i, k) {
		rc = check_property(r, &props, &extra, v, &k);
		jv_free(k);
		if (rc != OK)
			break;
	}
	jv_free(keys);
	jv_free(props);
	jv_free(extra);
	return rc;
}

static int
check_kind(struct run *r, const jv *s, const jv *v)
{
	switch (jv_get_kind(*v)) {
	case JV_KIND_NUMBER:	return check_number_value(r, s, v);
	case JV_KIND_STRING:	return check_string_value(r, s, v);
	case JV_KIND_ARRAY:	return check_array_value(r, s, v);
	case JV_KIND_OBJECT:	return check_object_value(r, s, v);
	default:		return OK;
	}
}

/*
 * A $ref is a loop when the same $ref was followed before with no step
 * into the value since: hops at the current depth are the ones to search.
 */
static int
check_ref_hop(struct run *r, const char *ref)
{
	int i;

	if (r->nhops == ART_SCHEMA_MAX_DEPTH)
		return art_err_set(r->err, "bad_schema", "$ref '%s': too deep "
		    "(more than %d nested)", ref, ART_SCHEMA_MAX_DEPTH);
	for (i = r->nhops - 1; i >= 0 && r->hops[i].depth == r->at.depth; i--)
		if (strcmp(r->hops[i].ref, ref) == 0)
			return art_err_set(r->err, "bad_schema", "$ref '%s': "
			    "loops without progress", ref);
	return OK;
}

static int
check_ref_value(struct run *r, const jv *s, const jv *v)
{
	jv ref = keyword(s, "$ref"), target;
	const char *name;
	int rc = OK;

	if (!is_kind(&ref, JV_KIND_STRING) ||
	    !is_local_ref(name = jv_string_value(ref))) {
		jv_free(ref);
		return OK;
	}
	if ((rc = check_ref_hop(r, name)) == OK &&
	    (rc = resolve(r->root, name, &target, r->err)) == OK) {
		r->hops[r->nhops].ref = name;
		r->hops[r->nhops++].depth = r->at.depth;
		rc = validate(r, &target, v);
		r->nhops--;
		jv_free(target);
	}
	jv_free(ref);
	return rc;
}

static int
check_all_of(struct run *r, const jv *s, const jv *v)
{
	jv all = keyword(s, "allOf");
	int rc = OK;

	if (is_kind(&all, JV_KIND_ARRAY)) {
		jv_array_foreach(all, i, sub) {
			if (rc == OK)
				rc = validate(r, &sub, v);
			jv_free(sub);
		}
	}
	jv_free(all);
	return rc;
}

/* How many of the schemas in s's keyword v matches, or BAD. */
static int
count_matches(struct run *r, const jv *s, const char *name, const jv *v,
    bool *present)
{
	jv list = keyword(s, name);
	int n = 0, rc;

	*present = is_kind(&list, JV_KIND_ARRAY);
	if (*present) {
		jv_array_foreach(list, i, sub) {
			if (n >= 0 && (rc = quietly(r, &sub, v)) == BAD)
				n = BAD;
			else if (n >= 0 && rc == OK)
				n++;
			jv_free(sub);
		}
	}
	jv_free(list);
	return n;
}

static int
check_any_of(struct run *r, const jv *s, const jv *v)
{
	bool present;
	int n = count_matches(r, s, "anyOf", v, &present);

	if (n == BAD)
		return BAD;
	return present && n == 0 ? no(r, "matches none of anyOf") : OK;
}

static int
check_one_of(struct run *r, const jv *s, const jv *v)
{
	bool present;
	int n = count_matches(r, s, "oneOf", v, &present);

	if (n == BAD)
		return BAD;
	if (!present || n == 1)
		return OK;
	if (n == 0)
		return no(r, "matches none of oneOf");
	return no(r, "matches %d of oneOf, expected exactly 1", n);
}

static int
check_not(struct run *r, const jv *s, const jv *v)
{
	jv sub = keyword(s, "not");
	int rc = OK;

	if (jv_is_valid(sub)) {
		rc = quietly(r, &sub, v);
		if (rc == OK)
			rc = no(r, "matches the schema in not");
		else if (rc == NO)
			rc = OK;
	}
	jv_free(sub);
	return rc;
}

/* A schema's checks, in the order schema.h promises. */
static check_fn *const checks[] = {
	check_type, check_enum, check_const, check_kind, check_ref_value,
	check_all_of, check_any_of, check_one_of, check_not,
};

static int
validate(struct run *r, const jv *s, const jv *v)
{
	size_t i;
	int rc;

	switch (jv_get_kind(*s)) {
	case JV_KIND_TRUE:
		return OK;
	case JV_KIND_FALSE:
		return no(r, "no value is allowed");
	case JV_KIND_OBJECT:
		break;
	default:	/* art_schema_check() has made this impossible */
		return art_err_set(r->err, "bad_schema", "%s: not a schema",
		    where(&r->at));
	}
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if ((rc = checks[i](r, s, v)) != OK)
			return rc;
	return OK;
}

int
art_schema_validate(const jv *schema, const jv *value, struct art_err *err)
{
	struct art_err scratch;
	struct run r;

	if (err == NULL)
		err = &scratch;
	if (art_schema_check(schema, err) == -1)
		return -1;
	r.root = schema;
	path_init(&r.at, "");
	r.nhops = 0;
	r.err = err;
	return validate(&r, schema, value) == OK ? 0 : -1;
}
