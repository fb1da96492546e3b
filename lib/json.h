/* json.h - typed access, canonical text and equality over libjq's jv */
#ifndef ART_JSON_H
#define ART_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/*
 * Field getters borrow obj (const jv *) and never consume it.  A missing
 * field, or one set to null, is an error only when required is set; then (and for a field of the
 * wrong kind) they return -1 with err code "bad_field" and a message such
 * as "field 'model': expected string, got number".  Optional missing
 * fields return 0 and leave *out as it was.  A string borrowed through
 * art_json_get_str() lives as long as obj does.
 */
int	art_json_get_str(const jv *obj, const char *key, int required,
	    const char **out, struct art_err *);
/* An integer in [-(2^53-1), 2^53-1]: JSON numbers are doubles in libjq. */
int	art_json_get_int(const jv *obj, const char *key, int required,
	    int64_t *out, struct art_err *);
int	art_json_get_bool(const jv *obj, const char *key, int required,
	    int *out, struct art_err *);
/* A field of the given kind; *out is a new jv the caller owns. */
int	art_json_get_kind(const jv *obj, const char *key, jv_kind kind,
	    int required, jv *out, struct art_err *);

/* obj's string field, or NULL when absent or not a string; borrowed. */
const char *art_json_str(const jv *obj, const char *key);
/* obj's field (a new jv; jv_null() when absent). */
jv	art_json_field(const jv *obj, const char *key);

/*
 * Parses text[0..len), which must be followed by a readable NUL at
 * text[len] (libjq 1.6 reads its input as a C string when it fails).
 * Returns the value, or jv_invalid() with err code "bad_json" and a
 * message that does not quote the input.  Bad text leaks nothing, even
 * where libjq 1.6 itself would ({"a""b"}: see json.c).
 */
jv	art_json_parse(const char *text, size_t len, struct art_err *);
/* Parses a NUL-terminated string; as art_json_parse(). */
jv	art_json_parse_str(const char *text, struct art_err *);

/*
 * Canonical text: compact, object keys sorted by code point, numbers as
 * libjq prints them (so -0 stays "-0").  Consumes v; returns a jv string
 * the caller owns.
 */
jv	art_json_canon(jv v);

/*
 * Structural equality (PROTOCOL-NOTES.md §6): object key order and
 * whitespace do not matter, arrays are ordered, {"a":null} differs from
 * {}, strings compare by code points.  Numbers compare by value: libjq 1.6
 * holds every number as a double, so 1 and 1.0 (and 0 and -0) are one
 * number on our bus; PROTOCOL-NOTES.md's integer/float distinction cannot
 * survive a libjq parse.
 * Borrows both.
 */
int	art_json_equal(const jv *a, const jv *b);

/*
 * Compact JSON text of v (borrowed), as jv_dump_string(v, 0) writes it
 * but several times faster: libjq 1.6 builds its text by appending to a
 * jv string piece by piece, checking UTF-8 each time.  Returns a string
 * the caller frees, *len its length, with a NUL after it (so len + 1
 * bytes are the caller's to use); NULL when out of memory.
 */
char	*art_json_dump(const jv *v, size_t *len);
/*
 * Object o (consumed) with key set to v (consumed) placed right after the
 * member after (at the end when o has none), as when it was built in
 * that order: dumps keep insertion order.
 */
jv	art_json_set_after(jv o, const char *after, const char *key, jv v);
/* o (consumed) with key set to v (consumed): jv_object_set by a C string. */
jv	art_json_set(jv o, const char *key, jv v);
/* The same, but o is left as it was when v is null or invalid. */
jv	art_json_set_some(jv o, const char *key, jv v);
/*
 * o (consumed, an object) without key, made afresh: libjq 1.6 never
 * reuses a deleted key's slot, so a long-lived map that calls come into
 * and go out of would otherwise grow, and slow, with every one.  O(n):
 * for the small maps kept across steps.
 */
jv	art_json_delete(jv o, const char *key);
/* s (a string, consumed) with v's JSON text appended; jv_invalid() when
 * out of memory. */
jv	art_json_append_dump(jv s, const jv *v);

/* Whether array a (borrowed) holds the string s. */
bool	art_json_has_str(const jv *a, const char *s);
/* Array a (consumed) without the strings equal to s. */
jv	art_json_without_str(jv a, const char *s);

/*
 * Checks, without building it, that text[0..len) is exactly one
 * well-formed JSON object (the caller has checked UTF-8 and NUL bytes),
 * and copies its top-level "type" and its "trigger" object's "type" into
 * type and trigger (each tn bytes; "" when absent, not a string, escaped
 * or too long).  1 when well-formed; 0 when not, or nested too deep to
 * scan (the caller parses it then, for the reason).  A stage that only
 * passes a line on decides from these two without parsing it.
 */
int	art_json_scan(const char *text, size_t len, char *type, char *trigger,
	    size_t tn);

/* The kind's name for messages: "string", "number", "object", … */
const char *art_json_kind_name(jv_kind);

/*
 * Checks that every number in the JSON text text[0..len) is one a double
 * holds as written, so that parsing it changes nothing a client sent:
 * -1 with err code "bad_input" naming the member (a JSON pointer) when a
 * number is out of range (1e400), an integer beyond 2^53
 * (18446744073709551616) or so small it would become 0 (1e-400).
 * Malformed text is not judged here (0): the parser says why.
 */
int	art_json_check_numbers(const char *text, size_t len,
	    struct art_err *);

#endif
