/* answer.c - structured answers: their schema, their caps, their text
 *
 * An answer is a plain jv object all the way through: the schema says
 * what one may hold, the caps trim what is too big, and the two renderers
 * only read it.  Widths on a terminal are counted in code points, each
 * one column: lib/ has no table of wide or combining characters, and a
 * table that is off by a column for CJK text is still readable.
 */
#include "answer.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema.h"
#include "utf8.h"

#define WHO	"structured answer"

static const char schema_text[] =
    "{\"type\": \"object\","
    " \"required\": [\"summary\"],"
    " \"additionalProperties\": false,"
    " \"properties\": {"
    "  \"summary\": {\"type\": \"string\"},"
    "  \"columns\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}},"
    "  \"rows\": {\"type\": \"array\", \"items\": {"
    "   \"type\": \"object\","
    "   \"required\": [\"cells\"],"
    "   \"additionalProperties\": false,"
    "   \"properties\": {\"cells\": {\"type\": \"array\","
    "    \"items\": {\"type\": \"string\"}}}}},"
    "  \"note\": {\"type\": \"string\"},"
    "  \"followups\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}},"
    "  \"schema_id\": {\"type\": \"string\"}}}";

jv
art_answer_schema(void)
{
	return jv_parse(schema_text);
}

jv
art_answer_format(void)
{
	jv f = jv_object();

	f = art_json_set(f, "name", jv_string(ART_ANSWER_FORMAT));
	f = art_json_set(f, "description", jv_string("The answer: a "
	    "summary, optionally a table of columns and rows of cells, a "
	    "note beneath it, and follow-up questions the user may ask "
	    "next."));
	return art_json_set(f, "schema", art_answer_schema());
}

/* --- reading a reply ---------------------------------------------------- */

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The JSON text of a reply: text trimmed, or what is inside the one ```
 * fence that is the whole of it (its opening line may name a language).
 * *start and *end bound it; -1 with err when a fence is not closed.
 */
static int
unfence(const char *text, size_t *start, size_t *end, struct art_err *err)
{
	size_t a = 0, b = strlen(text);
	const char *nl;

	while (a < b && is_space(text[a]))
		a++;
	while (b > a && is_space(text[b - 1]))
		b--;
	if (b - a >= 3 && strncmp(text + a, "```", 3) == 0) {
		if ((nl = memchr(text + a, '\n', b - a)) == NULL || b - a < 7 ||
		    strncmp(text + b - 3, "```", 3) != 0 ||
		    (size_t)(nl - text) + 1 > b - 3)
			return art_err_set(err, "bad_answer", WHO ": not JSON: "
			    "a ``` fence that is not closed");
		a = (size_t)(nl - text) + 1;
		b -= 3;
	}
	*start = a;
	*end = b;
	return 0;
}

/* A schema message, "/: missing required property 'x'", in our words. */
static int
invalid(const char *msg, struct art_err *err)
{
	static const char missing[] = "/: missing required property ";
	static const char extra[] = "/: property ";
	const char *q;

	if (strncmp(msg, missing, sizeof(missing) - 1) == 0)
		return art_err_set(err, "bad_answer", WHO ": missing member %s",
		    msg + sizeof(missing) - 1);
	if (strncmp(msg, extra, sizeof(extra) - 1) == 0 &&
	    (q = strstr(msg, " is not allowed")) != NULL)
		return art_err_set(err, "bad_answer", WHO ": unknown member "
		    "%.*s", (int)(q - msg - (sizeof(extra) - 1)),
		    msg + sizeof(extra) - 1);
	if (strncmp(msg, "/: ", 3) == 0)
		msg += 3;
	return art_err_set(err, "bad_answer", WHO ": %s", msg);
}

int
art_answer_parse(const char *text, jv *out, struct art_err *err)
{
	struct art_err e;
	size_t a = 0, b = 0;
	char *json;
	jv v, schema;
	int r;

	*out = jv_invalid();
	if (unfence(text, &a, &b, err) == -1)
		return -1;
	if (a == b)
		return art_err_set(err, "bad_answer", WHO ": not JSON: the "
		    "reply is empty");
	/* art_json_parse wants a NUL after the text. */
	if ((json = strndup(text + a, b - a)) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	v = art_json_parse(json, b - a, &e);
	free(json);
	if (!jv_is_valid(v)) {
		jv_free(v);
		return art_err_set(err, "bad_answer", WHO ": not JSON: %s",
		    strncmp(e.msg, "not valid JSON: ", 16) == 0 ? e.msg + 16 :
		    e.msg);
	}
	schema = art_answer_schema();
	r = art_schema_validate(&schema, &v, &e);
	jv_free(schema);
	if (r == -1) {
		jv_free(v);
		return invalid(e.msg, err);
	}
	*out = v;
	return 0;
}

/* --- the caps ------------------------------------------------------------ */

static size_t
bytes(const jv *s)
{
	return (size_t)jv_string_length_bytes(jv_copy(*s));
}

static size_t
length(const jv *a)
{
	return (size_t)jv_array_length(jv_copy(*a));
}

static const char *
plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static jv
warn(jv warnings, const char *part, jv message)
{
	jv w = art_json_set(jv_object(), "part", jv_string(part));

	return jv_array_append(warnings, art_json_set(w, "message", message));
}

/* "PART: a; b": the reasons one part lost something, or none. */
static jv
warn_parts(jv warnings, const char *part, const char *a, const char *b)
{
	if (*a == '\0' && *b == '\0')
		return warnings;
	return warn(warnings, part, jv_string_fmt("%s: %s%s%s", part, a,
	    *a != '\0' && *b != '\0' ? "; " : "", b));
}

/* The first n entries of array a (consumed). */
static jv
first(jv a, size_t n)
{
	return jv_array_slice(a, 0, (int)n);
}

static jv
cap_summary(jv answer, jv *warnings)
{
	jv s = art_json_field(&answer, "summary");
	size_t n = bytes(&s), keep;

	if (n > ART_ANSWER_SUMMARY_MAX) {
		keep = art_utf8_whole(jv_string_value(s),
		    ART_ANSWER_SUMMARY_MAX);
		*warnings = warn(*warnings, "summary", jv_string_fmt("summary: "
		    "%zu bytes over the cap of %d: cut to %zu", n,
		    ART_ANSWER_SUMMARY_MAX, keep));
		answer = art_json_set(answer, "summary",
		    jv_string_sized(jv_string_value(s), (int)keep));
	}
	jv_free(s);
	return answer;
}

static jv
cap_note(jv answer, jv *warnings)
{
	jv s = art_json_field(&answer, "note");
	size_t n;

	if (jv_get_kind(s) == JV_KIND_STRING &&
	    (n = bytes(&s)) > ART_ANSWER_NOTE_MAX) {
		*warnings = warn(*warnings, "note", jv_string_fmt("note: %zu "
		    "bytes over the cap of %d: dropped", n,
		    ART_ANSWER_NOTE_MAX));
		answer = jv_object_delete(answer, jv_string("note"));
	}
	jv_free(s);
	return answer;
}

/* Every row's cells cut to the first n. */
static jv
cut_cells(jv rows, size_t n)
{
	jv out = jv_array(), cells;

	jv_array_foreach(rows, i, row) {
		cells = art_json_field(&row, "cells");
		if (jv_get_kind(cells) == JV_KIND_ARRAY && length(&cells) > n)
			row = art_json_set(row, "cells", first(cells, n));
		else
			jv_free(cells);
		out = jv_array_append(out, row);
	}
	jv_free(rows);
	return out;
}

/* Strings in a (consumed) over max bytes made "": how many in *n. */
static jv
empty_long(jv a, size_t max, size_t *n)
{
	jv out = jv_array();

	*n = 0;
	jv_array_foreach(a, i, s) {
		if (bytes(&s) > max) {
			(*n)++;
			jv_free(s);
			s = jv_string("");
		}
		out = jv_array_append(out, s);
	}
	jv_free(a);
	return out;
}

static jv
cap_columns(jv answer, jv *warnings)
{
	jv cols = art_json_field(&answer, "columns"), rows;
	char a[128] = "", b[128] = "";
	size_t n, emptied;

	if (jv_get_kind(cols) != JV_KIND_ARRAY) {
		jv_free(cols);
		return answer;
	}
	if ((n = length(&cols)) > ART_ANSWER_COLUMNS_MAX) {
		snprintf(a, sizeof(a), "%zu columns over the cap of %d: %zu "
		    "dropped", n, ART_ANSWER_COLUMNS_MAX,
		    n - ART_ANSWER_COLUMNS_MAX);
		cols = first(cols, ART_ANSWER_COLUMNS_MAX);
		rows = art_json_field(&answer, "rows");
		if (jv_get_kind(rows) == JV_KIND_ARRAY)
			answer = art_json_set(answer, "rows", cut_cells(rows,
			    ART_ANSWER_COLUMNS_MAX));
		else
			jv_free(rows);
	}
	cols = empty_long(cols, ART_ANSWER_COLUMN_MAX, &emptied);
	if (emptied > 0)
		snprintf(b, sizeof(b), "%zu %s over the cap of %d bytes: "
		    "emptied", emptied, plural(emptied, "name", "names"),
		    ART_ANSWER_COLUMN_MAX);
	*warnings = warn_parts(*warnings, "columns", a, b);
	return art_json_set(answer, "columns", cols);
}

/* Row i (consumed) with its cells held to the caps. */
static jv
cap_row(jv row, size_t i, jv *warnings)
{
	jv cells = art_json_field(&row, "cells");
	char part[64], a[128] = "", b[128] = "";
	size_t n, emptied;

	if (jv_get_kind(cells) != JV_KIND_ARRAY) {
		jv_free(cells);
		return row;
	}
	if ((n = length(&cells)) > ART_ANSWER_CELLS_MAX) {
		snprintf(a, sizeof(a), "%zu cells over the cap of %d: %zu "
		    "dropped", n, ART_ANSWER_CELLS_MAX,
		    n - ART_ANSWER_CELLS_MAX);
		cells = first(cells, ART_ANSWER_CELLS_MAX);
	}
	cells = empty_long(cells, ART_ANSWER_CELL_MAX, &emptied);
	if (emptied > 0)
		snprintf(b, sizeof(b), "%zu %s over the cap of %d bytes: "
		    "emptied", emptied, plural(emptied, "cell", "cells"),
		    ART_ANSWER_CELL_MAX);
	snprintf(part, sizeof(part), "rows/%zu/cells", i);
	*warnings = warn_parts(*warnings, part, a, b);
	return art_json_set(row, "cells", cells);
}

static jv
cap_rows(jv answer, jv *warnings)
{
	jv rows = art_json_field(&answer, "rows"), out = jv_array();
	size_t n;

	if (jv_get_kind(rows) != JV_KIND_ARRAY) {
		jv_free(rows);
		jv_free(out);
		return answer;
	}
	if ((n = length(&rows)) > ART_ANSWER_ROWS_MAX) {
		*warnings = warn(*warnings, "rows", jv_string_fmt("rows: %zu "
		    "rows over the cap of %d: %zu dropped", n,
		    ART_ANSWER_ROWS_MAX, n - ART_ANSWER_ROWS_MAX));
		rows = first(rows, ART_ANSWER_ROWS_MAX);
	}
	jv_array_foreach(rows, i, row)
		out = jv_array_append(out, cap_row(row, (size_t)i, warnings));
	jv_free(rows);
	return art_json_set(answer, "rows", out);
}

/* The count first, as for the others; then the long ones go. */
static jv
cap_followups(jv answer, jv *warnings)
{
	jv fs = art_json_field(&answer, "followups"), out = jv_array();
	char a[128] = "", b[128] = "";
	size_t n, gone = 0;

	if (jv_get_kind(fs) != JV_KIND_ARRAY) {
		jv_free(fs);
		jv_free(out);
		return answer;
	}
	if ((n = length(&fs)) > ART_ANSWER_FOLLOWUPS_MAX) {
		snprintf(a, sizeof(a), "%zu followups over the cap of %d: %zu "
		    "dropped", n, ART_ANSWER_FOLLOWUPS_MAX,
		    n - ART_ANSWER_FOLLOWUPS_MAX);
		fs = first(fs, ART_ANSWER_FOLLOWUPS_MAX);
	}
	jv_array_foreach(fs, i, f) {
		if (bytes(&f) > ART_ANSWER_FOLLOWUP_MAX) {
			gone++;
			jv_free(f);
		} else
			out = jv_array_append(out, f);
	}
	jv_free(fs);
	if (gone > 0)
		snprintf(b, sizeof(b), "%zu %s over the cap of %d bytes: "
		    "dropped", gone, plural(gone, "followup", "followups"),
		    ART_ANSWER_FOLLOWUP_MAX);
	*warnings = warn_parts(*warnings, "followups", a, b);
	return art_json_set(answer, "followups", out);
}

jv
art_answer_cap(jv answer, jv *warnings)
{
	*warnings = jv_array();
	answer = cap_summary(answer, warnings);
	answer = cap_note(answer, warnings);
	/* Columns before rows: dropping a column drops its cells too. */
	answer = cap_columns(answer, warnings);
	answer = cap_rows(answer, warnings);
	return cap_followups(answer, warnings);
}

/* --- Markdown ----------------------------------------------------------- */

/* s as one table cell: "|" escaped, newlines as <br>. */
static jv
md_cell(jv out, const char *s)
{
	size_t n;

	out = jv_string_append_str(out, " ");
	for (; *s != '\0'; s += n) {
		/* Runs whole: libjq 1.6 replaces a part of a character. */
		if ((n = strcspn(s, "|\r\n")) > 0)
			out = jv_string_append_buf(out, s, (int)n);
		else {
			if (*s == '|')
				out = jv_string_append_str(out, "\\|");
			else if (*s == '\n')
				out = jv_string_append_str(out, "<br>");
			n = 1;
		}
	}
	return jv_string_append_str(out, " |");
}

/* The widest row: the table's columns. */
static size_t
table_width(const jv *cols, const jv *rows)
{
	size_t n = jv_get_kind(*cols) == JV_KIND_ARRAY ? length(cols) : 0, m;
	jv cells;

	if (jv_get_kind(*rows) != JV_KIND_ARRAY)
		return n;
	jv_array_foreach(*rows, i, row) {
		cells = art_json_field(&row, "cells");
		m = jv_get_kind(cells) == JV_KIND_ARRAY ? length(&cells) : 0;
		if (m > n)
			n = m;
		jv_free(cells);
		jv_free(row);
	}
	return n;
}

/* The string at a[i], or "" (a may be anything); borrowed from a. */
static const char *
nth(const jv *a, size_t i)
{
	jv s;
	const char *p;

	if (jv_get_kind(*a) != JV_KIND_ARRAY || i >= length(a))
		return "";
	s = jv_array_get(jv_copy(*a), (int)i);
	p = jv_get_kind(s) == JV_KIND_STRING ? jv_string_value(s) : "";
	jv_free(s);	/* a holds it */
	return p;
}

static jv
md_row(jv out, const jv *cells, size_t n)
{
	size_t i;

	out = jv_string_append_str(out, "|");
	for (i = 0; i < n; i++)
		out = md_cell(out, nth(cells, i));
	return jv_string_append_str(out, "\n");
}

static jv
md_table(jv out, const jv *a)
{
	jv cols = art_json_field(a, "columns"), rows = art_json_field(a,
	    "rows"), cells;
	size_t n = table_width(&cols, &rows), i;

	if (n > 0) {
		out = md_row(out, &cols, n);
		out = jv_string_append_str(out, "|");
		for (i = 0; i < n; i++)
			out = jv_string_append_str(out, " --- |");
		out = jv_string_append_str(out, "\n");
		if (jv_get_kind(rows) == JV_KIND_ARRAY)
			jv_array_foreach(rows, j, row) {
				cells = art_json_field(&row, "cells");
				out = md_row(out, &cells, n);
				jv_free(cells);
				jv_free(row);
			}
		out = jv_string_append_str(out, "\n");
	}
	jv_free(cols);
	jv_free(rows);
	return out;
}

/* s with newlines and tabs as spaces, appended. */
static jv
one_line(jv out, const char *s)
{
	size_t n;

	for (; *s != '\0'; s += n)
		if ((n = strcspn(s, "\n\t\r")) > 0)
			out = jv_string_append_buf(out, s, (int)n);
		else {
			out = jv_string_append_str(out, " ");
			n = 1;
		}
	return out;
}

jv
art_answer_markdown(const jv *a)
{
	const char *summary = art_json_str(a, "summary"),
	    *note = art_json_str(a, "note");
	jv out = jv_string(""), fs = art_json_field(a, "followups");
	int n;

	if (summary != NULL && *summary != '\0')
		out = jv_string_append_str(jv_string_append_str(out, summary),
		    "\n\n");
	out = md_table(out, a);
	if (note != NULL && *note != '\0')
		out = jv_string_append_str(one_line(jv_string_append_str(out,
		    "*"), note), "*\n\n");
	if (jv_get_kind(fs) == JV_KIND_ARRAY && length(&fs) > 0) {
		jv_array_foreach(fs, i, f) {
			if (jv_get_kind(f) == JV_KIND_STRING)
				out = jv_string_append_str(one_line(
				    jv_string_append_str(out, "- "),
				    jv_string_value(f)), "\n");
			jv_free(f);
		}
		out = jv_string_append_str(out, "\n");
	}
	jv_free(fs);
	/* One newline at the end, not the blank line between parts. */
	n = jv_string_length_bytes(jv_copy(out));
	if (n == 0)
		return jv_string_append_str(out, "\n");
	fs = jv_string_sized(jv_string_value(out), n - 1);
	jv_free(out);
	return fs;
}

/* --- terminal text ------------------------------------------------------ */

/* Display columns of s[0..n): its code points. */
static size_t
cols_of(const char *s, size_t n)
{
	size_t i, w = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

/* The byte offset in s[0..n) after its first w code points. */
static size_t
bytes_for(const char *s, size_t n, size_t w)
{
	size_t i;

	for (i = 0; i < n && w > 0; w--)
		i = art_utf8_fwd(s, i + 1, n);
	return i;
}

struct lines {
	jv	 a;		/* the finished lines, strings */
	jv	 cur;		/* the line being filled */
	size_t	 used;		/* its columns */
	size_t	 width;
};

static void
lines_flush(struct lines *l)
{
	l->a = jv_array_append(l->a, l->cur);
	l->cur = jv_string("");
	l->used = 0;
}

/* One word (no blanks) onto the lines, cut when wider than a line. */
static void
lines_word(struct lines *l, const char *w, size_t n)
{
	size_t cols = cols_of(w, n), k;

	if (l->used > 0 && l->used + 1 + cols > l->width)
		lines_flush(l);
	while (cols > l->width) {
		if (l->used > 0)
			lines_flush(l);
		k = bytes_for(w, n, l->width);
		l->cur = jv_string_append_buf(l->cur, w, (int)k);
		lines_flush(l);
		w += k;
		n -= k;
		cols -= l->width;
	}
	if (n == 0)
		return;
	if (l->used > 0) {
		l->cur = jv_string_append_str(l->cur, " ");
		l->used++;
	}
	l->cur = jv_string_append_buf(l->cur, w, (int)n);
	l->used += cols;
}

/* s wrapped by word to width columns: an array of lines, at least one. */
static jv
wrap(const char *s, size_t width)
{
	struct lines l = { jv_array(), jv_string(""), 0, width > 0 ? width :
	    1 };
	size_t n;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (*s == '\0')
			break;
		if (*s == '\n') {
			lines_flush(&l);
			s++;
			continue;
		}
		n = strcspn(s, " \t\r\n");
		lines_word(&l, s, n);
		s += n;
	}
	lines_flush(&l);
	jv_free(l.cur);
	return l.a;
}

static jv
add_lines(jv out, jv lines, const char *indent)
{
	jv_array_foreach(lines, i, line) {
		out = jv_string_append_str(out, indent);
		out = jv_string_append_str(jv_string_concat(out, line), "\n");
	}
	jv_free(lines);
	return out;
}

/* The columns the widest line of s takes, its blanks run together. */
static size_t
widest(const char *s)
{
	jv lines = wrap(s, (size_t)-1 / 2);
	size_t w, max = 0;

	jv_array_foreach(lines, i, line) {
		w = cols_of(jv_string_value(line), bytes(&line));
		max = w > max ? w : max;
		jv_free(line);
	}
	jv_free(lines);
	return max;
}

/* The columns cell i of the header and of every row needs, at most. */
static size_t
natural(const jv *cols, const jv *rows, size_t i)
{
	size_t w, max = widest(nth(cols, i));
	jv cells;

	if (jv_get_kind(*rows) != JV_KIND_ARRAY)
		return max;
	jv_array_foreach(*rows, k, row) {
		cells = art_json_field(&row, "cells");
		w = widest(nth(&cells, i));
		max = w > max ? w : max;
		jv_free(cells);
		jv_free(row);
	}
	return max;
}

/*
 * Each column's width: what it needs when all fit in width (two spaces
 * between columns); else the narrow ones keep theirs and the wide ones
 * share what is left, none narrower than 1.
 */
static void
shares(size_t *w, size_t n, size_t width)
{
	size_t room = width > 2 * (n - 1) ? width - 2 * (n - 1) : n, left,
	    wide, share, i;
	bool changed = true;
	bool *fixed = calloc(n, sizeof(*fixed));

	if (fixed == NULL)
		abort();	/* out of memory is fatal, as in libjq */
	left = room;
	wide = n;
	while (changed && wide > 0) {
		changed = false;
		share = left / wide;
		for (i = 0; i < n; i++)
			if (!fixed[i] && w[i] <= share) {
				fixed[i] = true;
				left -= w[i];
				wide--;
				changed = true;
			}
	}
	for (i = 0; wide > 0 && i < n; i++)
		if (!fixed[i]) {
			share = left / wide;
			w[i] = share > 0 ? share : 1;
			left -= w[i] < left ? w[i] : left;
			wide--;
		}
	free(fixed);
}

/* l (consumed) without the blanks at its end. */
static jv
trim(jv l)
{
	const char *p = jv_string_value(l);
	size_t n = bytes(&l);
	jv out;

	while (n > 0 && p[n - 1] == ' ')
		n--;
	out = jv_string_sized(p, (int)n);
	jv_free(l);
	return out;
}

/* One row: each cell wrapped to its column, lines side by side. */
static jv
text_row(jv out, const jv *cells, const size_t *w, size_t n)
{
	jv wrapped = jv_array(), cell, line, l;
	size_t i, k, height = 1, pad;

	for (i = 0; i < n; i++) {
		cell = wrap(nth(cells, i), w[i]);
		if (length(&cell) > height)
			height = length(&cell);
		wrapped = jv_array_append(wrapped, cell);
	}
	for (k = 0; k < height; k++) {
		l = jv_string("");
		for (i = 0; i < n; i++) {
			cell = jv_array_get(jv_copy(wrapped), (int)i);
			line = k < length(&cell) ? jv_array_get(cell, (int)k) :
			    (jv_free(cell), jv_string(""));
			pad = w[i] - cols_of(jv_string_value(line),
			    bytes(&line)) + 2;
			l = jv_string_concat(l, line);
			while (i + 1 < n && pad-- > 0)
				l = jv_string_append_str(l, " ");
		}
		out = jv_string_append_str(jv_string_concat(out, trim(l)),
		    "\n");
	}
	jv_free(wrapped);
	return out;
}

static jv
text_table(jv out, const jv *a, size_t width)
{
	jv cols = art_json_field(a, "columns"), rows = art_json_field(a,
	    "rows"), cells;
	size_t n = table_width(&cols, &rows), i, k, *w;

	if (n == 0) {
		jv_free(cols);
		jv_free(rows);
		return out;
	}
	if ((w = calloc(n, sizeof(*w))) == NULL)
		abort();	/* out of memory is fatal, as in libjq */
	for (i = 0; i < n; i++)
		w[i] = natural(&cols, &rows, i);
	shares(w, n, width);
	if (jv_get_kind(cols) == JV_KIND_ARRAY && length(&cols) > 0) {
		out = text_row(out, &cols, w, n);
		for (i = 0; i < n; i++) {
			for (k = 0; k < w[i]; k++)
				out = jv_string_append_str(out, "-");
			out = jv_string_append_str(out, i + 1 < n ? "  " :
			    "\n");
		}
	}
	if (jv_get_kind(rows) == JV_KIND_ARRAY)
		jv_array_foreach(rows, j, row) {
			cells = art_json_field(&row, "cells");
			out = text_row(out, &cells, w, n);
			jv_free(cells);
			jv_free(row);
		}
	free(w);
	jv_free(cols);
	jv_free(rows);
	return out;
}

/* A blank line between parts, none before the first. */
static jv
part(jv out)
{
	return jv_string_length_bytes(jv_copy(out)) > 0 ?
	    jv_string_append_str(out, "\n") : out;
}

jv
art_answer_text(const jv *a, size_t width)
{
	const char *summary = art_json_str(a, "summary"),
	    *note = art_json_str(a, "note");
	jv out = jv_string(""), fs = art_json_field(a, "followups"), t;
	size_t n;

	if (width < 20)
		width = 80;
	if (summary != NULL && *summary != '\0')
		out = add_lines(out, wrap(summary, width), "");
	t = text_table(jv_string(""), a, width);
	if (jv_string_length_bytes(jv_copy(t)) > 0)
		out = jv_string_concat(part(out), t);
	else
		jv_free(t);
	if (note != NULL && *note != '\0')
		out = add_lines(part(out), wrap(note, width), "");
	if (jv_get_kind(fs) == JV_KIND_ARRAY && (n = length(&fs)) > 0) {
		out = part(out);
		jv_array_foreach(fs, i, f) {
			out = jv_string_concat(out, jv_string_fmt("  /%d ",
			    i + 1));
			if (jv_get_kind(f) == JV_KIND_STRING)
				out = one_line(out, jv_string_value(f));
			out = jv_string_append_str(out, "\n");
			jv_free(f);
		}
	}
	jv_free(fs);
	return jv_string_length_bytes(jv_copy(out)) > 0 ? out :
	    jv_string_append_str(out, "\n");
}
