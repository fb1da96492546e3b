/* answer-test - structured answers: the schema, the caps, the text */
#include "answer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema.h"
#include "tap.h"

static jv
J(const char *text)
{
	struct art_err e;
	jv v = art_json_parse_str(text, &e);

	if (!jv_is_valid(v)) {
		printf("# bad test JSON: %s: %s\n", text, e.msg);
		exit(1);
	}
	return v;
}

static int
same(const char *got, const char *want)
{
	int eq = strcmp(got, want) == 0;

	if (!eq)
		printf("#   got  '%s'\n#   want '%s'\n", got, want);
	return eq;
}

/* A string of n copies of c. */
static char *
rep(char c, size_t n)
{
	char *s = malloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ---------------------------------------------------------------- parse */

/* Parses text: 0 and the message "" when it reads, else the message. */
static int
parse(const char *text, char *msg, size_t n)
{
	struct art_err e = { .code = "" };
	jv v;
	int r = art_answer_parse(text, &v, &e);

	snprintf(msg, n, "%s", r == 0 ? "" : e.msg);
	if (r == -1 && (jv_is_valid(v) || strcmp(e.code, "bad_answer") != 0))
		r = -2;		/* *out must be invalid, the code bad_answer */
	jv_free(v);
	return r;
}

static void
test_schema_is_usable(void)
{
	jv s = art_answer_schema(), f = art_answer_format(), u;
	struct art_err e;

	ok(art_schema_check(&s, &e) == 0, "the schema can be used");
	u = art_schema_unsupported(&s);
	ok(jv_array_length(u) == 0, "the schema uses nothing unsupported");
	ok(same(art_json_str(&f, "name"), "structured_answer") &&
	    art_json_str(&f, "description") != NULL,
	    "the format is named structured_answer");
	jv_free(s);
	jv_free(f);
}

static void
test_parse_accepts(void)
{
	char m[300];
	jv v;
	struct art_err e;

	ok(parse("{\"summary\": \"s\", \"columns\": [\"a\", \"b\"], "
	    "\"rows\": [{\"cells\": [\"1\", \"2\"]}], \"note\": \"n\", "
	    "\"followups\": [\"more\"], \"schema_id\": \"x\"}", m,
	    sizeof(m)) == 0, "a full answer reads");
	ok(parse("{\"summary\": \"just this\"}", m, sizeof(m)) == 0,
	    "a summary alone reads");
	ok(parse("```json\n{\"summary\": \"fenced\"}\n```", m, sizeof(m)) ==
	    0, "JSON inside a ```json fence reads");
	ok(parse("  \n```\n{\"summary\": \"fenced\"}\n```\n", m, sizeof(m)) ==
	    0, "JSON inside a bare ``` fence, blanks around, reads");
	ok(art_answer_parse("```json\n{\"summary\": \"x\"}\n```", &v, &e) ==
	    0 && same(art_json_str(&v, "summary"), "x"),
	    "the fenced answer is the one inside");
	jv_free(v);
}

static void
test_parse_refuses(void)
{
	char m[300];

	ok(parse("Here you are: {\"summary\": \"s\"}", m, sizeof(m)) == -1 &&
	    strncmp(m, "structured answer: not JSON: ", 29) == 0 &&
	    strchr(m, '\n') == NULL, "prose is not JSON: %s", m);
	ok(parse("", m, sizeof(m)) == -1 &&
	    same(m, "structured answer: not JSON: the reply is empty"),
	    "an empty reply is not JSON");
	ok(parse("```json\n{\"summary\": \"s\"}", m, sizeof(m)) == -1 &&
	    same(m, "structured answer: not JSON: a ``` fence that is not "
	    "closed"), "an open fence is not JSON");
	ok(parse("{\"columns\": []}", m, sizeof(m)) == -1 &&
	    same(m, "structured answer: missing member 'summary'"),
	    "summary missing");
	ok(parse("{\"summary\": 3}", m, sizeof(m)) == -1 &&
	    same(m, "structured answer: /summary: expected string, got "
	    "number"), "summary not a string");
	ok(parse("{\"summary\": \"s\", \"rows\": [[\"1\"]]}", m, sizeof(m)) ==
	    -1 && same(m, "structured answer: /rows/0: expected object, got "
	    "array"), "rows not objects");
	ok(parse("{\"summary\": \"s\", \"rows\": [{\"cells\": [1]}]}", m,
	    sizeof(m)) == -1 && same(m, "structured answer: /rows/0/cells/0: "
	    "expected string, got number"), "cells not strings");
	ok(parse("{\"summary\": \"s\", \"table\": []}", m, sizeof(m)) == -1 &&
	    same(m, "structured answer: unknown member 'table'"),
	    "an unknown member");
	ok(parse("[\"summary\"]", m, sizeof(m)) == -1 &&
	    same(m, "structured answer: expected object, got array"),
	    "an array is no answer");
}

/* ----------------------------------------------------------------- caps */

/* answer capped; its warnings' canonical text into *w (a new jv). */
static jv
cap(jv answer, jv *w)
{
	jv warnings, out = art_answer_cap(answer, &warnings);

	*w = art_json_canon(warnings);
	return out;
}

/* An answer of summary "s" and member key (text, JSON), as JSON text. */
static jv
with(const char *key, jv v)
{
	return art_json_set(J("{\"summary\": \"s\"}"), key, v);
}

static jv
strings(size_t n, size_t len)
{
	jv a = jv_array();
	char *s = rep('x', len);
	size_t i;

	for (i = 0; i < n; i++)
		a = jv_array_append(a, jv_string(s));
	free(s);
	return a;
}

static size_t
count(const jv *a, const char *key)
{
	jv v = art_json_field(a, key);
	size_t n = jv_get_kind(v) == JV_KIND_ARRAY ?
	    (size_t)jv_array_length(jv_copy(v)) : (size_t)-1;

	jv_free(v);
	return n;
}

/* The string at a's key[i]; borrowed from a. */
static const char *
at(const jv *a, const char *key, int i)
{
	jv v = art_json_field(a, key), s = jv_array_get(v, i);
	const char *p = jv_get_kind(s) == JV_KIND_STRING ?
	    jv_string_value(s) : "?";

	jv_free(s);
	return p;
}

static void
test_cap_summary(void)
{
	char *s = rep('a', ART_ANSWER_SUMMARY_MAX), *t;
	jv a, w;

	a = cap(art_json_set(jv_object(), "summary", jv_string(s)), &w);
	ok(strlen(art_json_str(&a, "summary")) == ART_ANSWER_SUMMARY_MAX &&
	    same(jv_string_value(w), "[]"), "summary at 4096 bytes is kept");
	jv_free(a);
	jv_free(w);
	/* One over, ending in a two-byte character across the cap. */
	t = malloc(ART_ANSWER_SUMMARY_MAX + 2);
	memset(t, 'a', ART_ANSWER_SUMMARY_MAX - 1);
	memcpy(t + ART_ANSWER_SUMMARY_MAX - 1, "\xc3\xa9", 3);
	a = cap(art_json_set(jv_object(), "summary", jv_string(t)), &w);
	ok(strlen(art_json_str(&a, "summary")) == ART_ANSWER_SUMMARY_MAX -
	    1 && same(jv_string_value(w), "[{\"message\":\"summary: 4097 bytes "
	    "over the cap of 4096: cut to 4095\",\"part\":\"summary\"}]"),
	    "summary one over is cut between characters, with a warning");
	jv_free(a);
	jv_free(w);
	free(s);
	free(t);
}

static void
test_cap_note(void)
{
	char *s = rep('n', ART_ANSWER_NOTE_MAX);
	jv a, w, note;

	a = cap(with("note", jv_string(s)), &w);
	ok(strlen(art_json_str(&a, "note")) == ART_ANSWER_NOTE_MAX &&
	    same(jv_string_value(w), "[]"), "note at 2048 bytes is kept");
	jv_free(a);
	jv_free(w);
	free(s);
	s = rep('n', ART_ANSWER_NOTE_MAX + 1);
	a = cap(with("note", jv_string(s)), &w);
	note = art_json_field(&a, "note");
	ok(jv_get_kind(note) == JV_KIND_NULL && same(jv_string_value(w),
	    "[{\"message\":\"note: 2049 bytes over the cap of 2048: dropped\","
	    "\"part\":\"note\"}]") && same(art_json_str(&a, "summary"), "s"),
	    "note one over is dropped, the rest kept");
	jv_free(note);
	jv_free(a);
	jv_free(w);
	free(s);
}

static jv
row(jv cells)
{
	return art_json_set(jv_object(), "cells", cells);
}

static void
test_cap_columns(void)
{
	jv a, w, rows, r0;

	a = with("columns", strings(32, 64));
	a = art_json_set(a, "rows", jv_array_append(jv_array(),
	    row(strings(32, 1))));
	a = cap(a, &w);
	ok(count(&a, "columns") == 32 && strlen(at(&a, "columns", 31)) == 64 &&
	    same(jv_string_value(w), "[]"),
	    "32 columns of 64 bytes are kept");
	jv_free(a);
	jv_free(w);

	a = with("columns", strings(33, 1));
	a = art_json_set(a, "rows", jv_array_append(jv_array(),
	    row(strings(33, 1))));
	a = cap(a, &w);
	rows = art_json_field(&a, "rows");
	r0 = jv_array_get(rows, 0);
	ok(count(&a, "columns") == 32 && count(&r0, "cells") == 32 &&
	    same(jv_string_value(w), "[{\"message\":\"columns: 33 columns "
	    "over the cap of 32: 1 dropped\",\"part\":\"columns\"}]"),
	    "the 33rd column goes, and its cells with it");
	jv_free(r0);
	jv_free(a);
	jv_free(w);

	a = with("columns", jv_array_append(jv_array_append(jv_array(),
	    jv_array_get(strings(1, 65), 0)), jv_string("b")));
	a = cap(a, &w);
	ok(count(&a, "columns") == 2 && same(at(&a, "columns", 0), "") &&
	    same(at(&a, "columns", 1), "b") && same(jv_string_value(w),
	    "[{\"message\":\"columns: 1 name over the cap of 64 bytes: "
	    "emptied\",\"part\":\"columns\"}]"),
	    "a name one over becomes \"\", keeping its place");
	jv_free(a);
	jv_free(w);
}

static jv
rows_of(size_t n)
{
	jv a = jv_array();
	size_t i;

	for (i = 0; i < n; i++)
		a = jv_array_append(a, row(strings(1, 1)));
	return a;
}

static void
test_cap_rows(void)
{
	jv a, w;

	a = cap(with("rows", rows_of(200)), &w);
	ok(count(&a, "rows") == 200 && same(jv_string_value(w), "[]"),
	    "200 rows are kept");
	jv_free(a);
	jv_free(w);
	a = cap(with("rows", rows_of(201)), &w);
	ok(count(&a, "rows") == 200 && same(jv_string_value(w),
	    "[{\"message\":\"rows: 201 rows over the cap of 200: 1 dropped\","
	    "\"part\":\"rows\"}]"), "the 201st row goes, with a warning");
	jv_free(a);
	jv_free(w);
}

/* Row i of a's cells, a new jv. */
static jv
cells_of(const jv *a, int i)
{
	jv r = jv_array_get(art_json_field(a, "rows"), i),
	    c = art_json_field(&r, "cells");

	jv_free(r);
	return c;
}

static void
test_cap_cells(void)
{
	jv a, w, c;

	a = jv_array_append(jv_array_append(jv_array(), row(strings(1, 1))),
	    row(strings(32, 1024)));
	a = cap(with("rows", a), &w);
	c = cells_of(&a, 1);
	ok(jv_array_length(jv_copy(c)) == 32 && same(jv_string_value(w),
	    "[]"), "32 cells of 1 KiB are kept");
	jv_free(c);
	jv_free(a);
	jv_free(w);

	a = jv_array_append(jv_array_append(jv_array(), row(strings(1, 1))),
	    row(strings(33, 1)));
	a = cap(with("rows", a), &w);
	c = cells_of(&a, 1);
	ok(jv_array_length(jv_copy(c)) == 32 && same(jv_string_value(w),
	    "[{\"message\":\"rows/1/cells: 33 cells over the cap of 32: 1 "
	    "dropped\",\"part\":\"rows/1/cells\"}]"),
	    "the 33rd cell of a row goes, the part naming the row");
	jv_free(c);
	jv_free(a);
	jv_free(w);

	a = jv_array_append(jv_array(), row(jv_array_append(strings(1, 1025),
	    jv_string("ok"))));
	a = cap(with("rows", a), &w);
	c = cells_of(&a, 0);
	ok(jv_array_length(jv_copy(c)) == 2 && same(jv_string_value(w),
	    "[{\"message\":\"rows/0/cells: "
	    "1 cell over the cap of 1024 bytes: emptied\",\"part\":"
	    "\"rows/0/cells\"}]"), "a cell one over becomes \"\"");
	c = jv_array_get(c, 0);
	ok(same(jv_string_value(c), ""), "... in its place");
	jv_free(c);
	jv_free(a);
	jv_free(w);
}

static void
test_cap_followups(void)
{
	jv a, w;

	a = cap(with("followups", strings(8, 256)), &w);
	ok(count(&a, "followups") == 8 && same(jv_string_value(w), "[]"),
	    "8 follow-ups of 256 bytes are kept");
	jv_free(a);
	jv_free(w);
	a = cap(with("followups", strings(9, 1)), &w);
	ok(count(&a, "followups") == 8 && same(jv_string_value(w),
	    "[{\"message\":\"followups: 9 followups over the cap of 8: 1 "
	    "dropped\",\"part\":\"followups\"}]"), "the 9th follow-up goes");
	jv_free(a);
	jv_free(w);
	a = cap(with("followups", jv_array_append(strings(1, 257),
	    jv_string("short"))), &w);
	ok(count(&a, "followups") == 1 && same(at(&a, "followups", 0),
	    "short") && same(jv_string_value(w), "[{\"message\":\"followups: "
	    "1 followup over the cap of 256 bytes: dropped\",\"part\":"
	    "\"followups\"}]"), "a follow-up one over goes");
	jv_free(a);
	jv_free(w);
}

static void
test_cap_one_warning_a_part(void)
{
	char *note;
	jv a, w;

	a = with("followups", jv_array_concat(strings(9, 1), strings(1, 300)));
	note = rep('n', 3000);
	a = art_json_set(a, "note", jv_string(note));
	free(note);
	a = cap(a, &w);
	ok(same(jv_string_value(w), "[{\"message\":\"note: 3000 bytes over "
	    "the cap of 2048: dropped\",\"part\":\"note\"},{\"message\":"
	    "\"followups: 10 followups over the cap of 8: 2 dropped\","
	    "\"part\":\"followups\"}]"),
	    "warnings in order, one a part");
	jv_free(a);
	jv_free(w);
	a = with("followups", jv_array_concat(strings(1, 300), strings(9, 1)));
	a = cap(a, &w);
	ok(count(&a, "followups") == 7 && same(jv_string_value(w),
	    "[{\"message\":\"followups: 10 followups over the cap of 8: 2 "
	    "dropped; 1 followup over the cap of 256 bytes: dropped\","
	    "\"part\":\"followups\"}]"), "both reasons of a part in one "
	    "warning");
	jv_free(a);
	jv_free(w);
}

/* ------------------------------------------------------------- Markdown */

static void
test_markdown(void)
{
	jv a = J("{\"summary\": \"Two files.\", \"columns\": [\"name\", "
	    "\"mode\"], \"rows\": [{\"cells\": [\"a|b\", \"rw\"]}, "
	    "{\"cells\": [\"c\"]}], \"note\": \"From ls.\", "
	    "\"followups\": [\"Show more\", \"Sort\"]}"), md;

	md = art_answer_markdown(&a);
	ok(same(jv_string_value(md), "Two files.\n\n"
	    "| name | mode |\n| --- | --- |\n| a\\|b | rw |\n| c |  |\n\n"
	    "*From ls.*\n\n- Show more\n- Sort\n"),
	    "markdown: summary, table with | escaped, note, follow-ups");
	jv_free(md);
	jv_free(a);
	a = J("{\"summary\": \"s\", \"rows\": [{\"cells\": [\"1\", "
	    "\"2\\nmore\"]}]}");
	md = art_answer_markdown(&a);
	ok(same(jv_string_value(md), "s\n\n|  |  |\n| --- | --- |\n"
	    "| 1 | 2<br>more |\n"), "markdown: no columns, an empty header");
	jv_free(md);
	jv_free(a);
	a = J("{\"summary\": \"only\"}");
	md = art_answer_markdown(&a);
	ok(same(jv_string_value(md), "only\n"), "markdown: a summary alone");
	jv_free(md);
	jv_free(a);
}

/* ----------------------------------------------------------------- text */

static void
test_text_aligns_by_width(void)
{
	jv a = J("{\"summary\": \"Moves.\", \"columns\": [\"from\", \"to\"], "
	    "\"rows\": [{\"cells\": [\"caf\\u00e9\", \"\\u2192 here\"]}, "
	    "{\"cells\": [\"x\", \"y\"]}], \"note\": \"As of now.\", "
	    "\"followups\": [\"Undo\", \"Again\"]}"), t;

	t = art_answer_text(&a, 80);
	ok(same(jv_string_value(t), "Moves.\n\n"
	    "from  to\n----  ------\n"
	    "caf\xc3\xa9  \xe2\x86\x92 here\nx     y\n\n"
	    "As of now.\n\n  /1 Undo\n  /2 Again\n"),
	    "text: columns aligned by characters, note, numbered follow-ups");
	jv_free(t);
	jv_free(a);
}

static void
test_text_wraps_a_wide_cell(void)
{
	jv a = J("{\"summary\": \"A summary long enough that it wraps at "
	    "forty columns.\", \"columns\": [\"key\", \"value\"], "
	    "\"rows\": [{\"cells\": [\"k\", \"one two three four five six "
	    "seven eight nine ten eleven\"]}]}"), t;

	t = art_answer_text(&a, 40);
	ok(same(jv_string_value(t),
	    "A summary long enough that it wraps at\nforty columns.\n\n"
	    "key  value\n---  -----------------------------------\n"
	    "k    one two three four five six seven\n"
	    "     eight nine ten eleven\n"),
	    "text: a wide cell wraps within its column at 40");
	jv_free(t);
	jv_free(a);
	a = J("{\"summary\": \"s\", \"rows\": [{\"cells\": "
	    "[\"abcdefghijklmnopqrstuvwxyz\", \"abcdefghijklmnopqrstuvwxyz\"]}"
	    "]}");
	t = art_answer_text(&a, 40);
	ok(same(jv_string_value(t), "s\n\nabcdefghijklmnopqrs  "
	    "abcdefghijklmnopqrs\ntuvwxyz              tuvwxyz\n"),
	    "text: a word wider than its share is cut, no header without "
	    "columns");
	jv_free(t);
	jv_free(a);
}

int
main(void)
{
	test_schema_is_usable();
	test_parse_accepts();
	test_parse_refuses();
	test_cap_summary();
	test_cap_note();
	test_cap_columns();
	test_cap_rows();
	test_cap_cells();
	test_cap_followups();
	test_cap_one_warning_a_part();
	test_markdown();
	test_text_aligns_by_width();
	test_text_wraps_a_wide_cell();
	return tap_done();
}
