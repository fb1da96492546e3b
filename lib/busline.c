/* busline.c - ids, subjects and shards for ring lines on NATS */
#include "busline.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sha.h"

#define H_DIGITS	16	/* hex digits of the SHA-256 kept in an id */

/* Writes fmt into out; false (out[0] NUL) when it does not fit. */
static bool __attribute__((format(printf, 2, 3)))
put(char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, ART_BUSLINE_ID_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= ART_BUSLINE_ID_MAX) {
		out[0] = '\0';
		return false;
	}
	return true;
}

/* The first H_DIGITS hex digits of the SHA-256 of text into h. */
static void
short_hash(const char *text, size_t len, char h[H_DIGITS + 1])
{
	unsigned char d[ART_SHA256_LEN];
	char hex[2 * ART_SHA256_LEN + 1];

	art_sha256(text, len, d);
	art_hex(d, ART_SHA256_LEN, hex);
	memcpy(h, hex, H_DIGITS);
	h[H_DIGITS] = '\0';
}

/* line's integer field key, 1 when absent; false when not an integer. */
static bool
count_of(const jv *line, const char *key, int64_t *n)
{
	*n = 1;
	return art_json_get_int(line, key, 0, n, NULL) == 0;
}

static bool
is_client(const char *type)
{
	return strncmp(type, "client.", 7) == 0 ||
	    strcmp(type, "interrupt.resume") == 0;
}

static bool
is_call(const char *type)
{
	return strcmp(type, "llm.request") == 0 ||
	    strcmp(type, "llm.result") == 0 || strcmp(type, "llm.error") == 0;
}

bool
art_busline_msg_id(const jv *line, const char *text, size_t len, char *out)
{
	const char *type, *sid, *id;
	char h[H_DIGITS + 1];
	int64_t n;

	out[0] = '\0';
	if (jv_get_kind(*line) != JV_KIND_OBJECT ||
	    (type = art_json_str(line, "type")) == NULL)
		return false;
	if ((sid = art_json_str(line, "session_id")) == NULL)
		sid = "";
	if (strcmp(type, "decision.request") == 0) {
		if ((id = art_json_str(line, "decision_id")) == NULL ||
		    !count_of(line, "attempts", &n))
			return false;
		return put(out, "%s:%s:%s:%" PRId64, type, sid, id, n);
	}
	if (is_call(type) || strcmp(type, "tool.result") == 0 ||
	    strcmp(type, "tool.error") == 0) {
		if ((id = art_json_str(line, "id")) == NULL ||
		    !count_of(line, "attempt", &n))
			return false;
		return put(out, "%s:%s:%s:%" PRId64, type, sid, id, n);
	}
	if (strcmp(type, "decision.response") == 0)
		id = art_json_str(line, "decision_id");
	else if (is_client(type)) {
		if ((id = art_json_str(line, "turn_id")) == NULL)
			id = art_json_str(line, "interrupt_id");
	} else if (strcmp(type, "error") == 0) {
		short_hash(text, len, h);
		return put(out, "%s:%s:%s", type, sid, h);
	} else
		return false;
	if (id == NULL)
		return false;
	short_hash(text, len, h);
	return put(out, "%s:%s:%s:%s", type, sid, id, h);
}

bool
art_busline_ack_key(const jv *line, char *out)
{
	const char *type, *sid, *id;
	int64_t n;

	out[0] = '\0';
	if (jv_get_kind(*line) != JV_KIND_OBJECT ||
	    (type = art_json_str(line, "type")) == NULL)
		return false;
	if ((sid = art_json_str(line, "session_id")) == NULL)
		sid = "";
	if (strcmp(type, "decision.request") == 0 ||
	    strcmp(type, "decision.response") == 0) {
		if ((id = art_json_str(line, "decision_id")) == NULL)
			return false;
		return put(out, "%s:%s", sid, id);
	}
	if (!is_call(type) || (id = art_json_str(line, "id")) == NULL ||
	    !count_of(line, "attempt", &n))
		return false;
	return put(out, "%s:%s:%" PRId64, sid, id, n);
}

const char *
art_busline_shard(const char *sid, const char *const *shards, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const unsigned char *p;

	for (p = (const unsigned char *)sid; *p != '\0'; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	return shards[h % n];
}

/* Is s, len bytes, one subject token: non-empty, no space, '.', '*', '>'? */
static bool
is_token(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
		if (strchr(". \t\r\n*>", s[i]) != NULL || s[i] == '\0')
			return false;
	return true;
}

/* Is s a subject to publish to: tokens between dots, no wildcard? */
static const char *
subject_bad(const char *s)
{
	const char *p = s, *dot;

	if (*s == '\0')
		return "it is empty";
	for (;;) {
		dot = strchr(p, '.');
		if (dot == NULL)
			dot = p + strlen(p);
		if (dot == p)
			return "it has an empty token";
		if (!is_token(p, (size_t)(dot - p)))
			return strpbrk(s, "*>") != NULL ? "it holds a wildcard" :
			    "it holds a space";
		if (*dot == '\0')
			return NULL;
		p = dot + 1;
	}
}

int
art_busline_subject(const char *template, const char *sid,
    const char *owner, char *out, struct art_err *err)
{
	const char *p, *with, *why;
	size_t n = 0, k;

	out[0] = '\0';
	for (p = template; *p != '\0'; p += k) {
		with = NULL;
		if (strncmp(p, "{session}", 9) == 0) {
			if (sid == NULL)
				return art_err_set(err, "bad_subject",
				    "subject '%s': names {session} and there "
				    "is no session", template);
			if (!is_token(sid, strlen(sid)))
				return art_err_set(err, "bad_subject",
				    "subject '%s': session id '%s' is not one "
				    "subject token", template, sid);
			with = sid;
			k = 9;
		} else if (strncmp(p, "{owner}", 7) == 0) {
			if (owner == NULL)
				return art_err_set(err, "bad_subject",
				    "subject '%s': names {owner} and there is "
				    "no owner", template);
			with = owner;
			k = 7;
		} else
			k = 1;
		if (with == NULL)
			with = p;
		if (n + (with == p ? 1 : strlen(with)) >=
		    ART_BUSLINE_SUBJECT_MAX) {
			out[0] = '\0';
			return art_err_set(err, "bad_subject",
			    "subject '%s': longer than %d bytes", template,
			    ART_BUSLINE_SUBJECT_MAX - 1);
		}
		if (with == p)
			out[n++] = *p;
		else {
			memcpy(out + n, with, strlen(with));
			n += strlen(with);
		}
	}
	out[n] = '\0';
	if ((why = subject_bad(out)) != NULL) {
		out[0] = '\0';
		return art_err_set(err, "bad_subject", "subject '%s': %s",
		    template, why);
	}
	return 0;
}

bool
art_busline_subject_has(const char *template, const char *what)
{
	char want[32];
	int n = snprintf(want, sizeof(want), "{%s}", what);

	return n > 0 && (size_t)n < sizeof(want) &&
	    strstr(template, want) != NULL;
}

void
art_busline_shards_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

char **
art_busline_shards(const char *text, size_t *n, struct art_err *err)
{
	const char *p = text, *comma;
	char **v;
	size_t i, len, cap = 1;

	*n = 0;
	for (p = text; *p != '\0'; p++)
		if (*p == ',')
			cap++;
	if ((v = calloc(cap + 1, sizeof(*v))) == NULL) {
		art_err_set(err, "bad_shards", "--shards: out of memory");
		return NULL;
	}
	if (*text == '\0') {
		art_err_set(err, "bad_shards", "--shards: the list is empty");
		goto bad;
	}
	for (p = text;; p = comma + 1) {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (len == 0) {
			art_err_set(err, "bad_shards", "--shards '%s': an "
			    "empty name", text);
			goto bad;
		}
		if (!is_token(p, len)) {
			art_err_set(err, "bad_shards", "--shards '%s': '%.*s' "
			    "is not one subject token", text, (int)len, p);
			goto bad;
		}
		for (i = 0; i < *n; i++)
			if (strlen(v[i]) == len && memcmp(v[i], p, len) == 0) {
				art_err_set(err, "bad_shards", "--shards "
				    "'%s': '%.*s' is named twice", text,
				    (int)len, p);
				goto bad;
			}
		if ((v[*n] = strndup(p, len)) == NULL) {
			art_err_set(err, "bad_shards", "--shards: out of "
			    "memory");
			goto bad;
		}
		(*n)++;
		if (comma == NULL)
			return v;
	}
bad:
	art_busline_shards_free(v);
	*n = 0;
	return NULL;
}
