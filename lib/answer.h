/* answer.h - structured answers: the seed's StructuredAnswerEvent shape
 *
 * An agent with "answer": "structured" asks the model for a typed answer
 * (seeds/002, StructuredAnswerEvent) instead of prose:
 *
 *	{"summary": "...", "columns": ["a", "b"],
 *	 "rows": [{"cells": ["1", "2"]}], "note": "...",
 *	 "followups": ["Show more"], "schema_id": ""}
 *
 * summary is always there; the rest is optional.  This module holds the
 * shape's JSON Schema, reads a model's reply against it, holds an answer
 * to the seed's size caps before anything is emitted, and draws an answer
 * as Markdown and as terminal text.  It is pure: no store, no I/O.
 */
#ifndef ART_ANSWER_H
#define ART_ANSWER_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

/* The seed's caps, in bytes and in entries. */
#define ART_ANSWER_SUMMARY_MAX		4096
#define ART_ANSWER_NOTE_MAX		2048
#define ART_ANSWER_COLUMNS_MAX		32
#define ART_ANSWER_COLUMN_MAX		64
#define ART_ANSWER_ROWS_MAX		200
#define ART_ANSWER_CELLS_MAX		32
#define ART_ANSWER_CELL_MAX		1024
#define ART_ANSWER_FOLLOWUPS_MAX	8
#define ART_ANSWER_FOLLOWUP_MAX		256

/* The name of the response_format (and of Anthropic's forced tool). */
#define ART_ANSWER_FORMAT	"structured_answer"

/*
 * The JSON Schema an answer meets: an object; summary a string and
 * required; columns an array of strings; rows an array of objects with
 * cells, an array of strings; note, schema_id strings; followups an
 * array of strings; no other members.  A new jv.
 */
jv	art_answer_schema(void);

/*
 * The LlmRequest's response_format that asks for an answer:
 * {"name": ART_ANSWER_FORMAT, "description": "...", "schema": ...}.
 */
jv	art_answer_format(void);

/*
 * Reads a model's reply text (JSON, or JSON inside one ``` fence) as an
 * answer and validates it against art_answer_schema(): 0 and *out the
 * answer (a new jv), or -1 with err code "bad_answer" and a message
 * naming what is wrong ("structured answer: not JSON: ...",
 * "structured answer: missing member 'summary'", "structured answer:
 * /rows/0/cells: ...").  *out is jv_invalid() on failure.
 */
int	art_answer_parse(const char *text, jv *out, struct art_err *);

/*
 * answer (consumed, valid per the schema) held to the caps; *warnings
 * receives a new array with one {"part", "message"} per part dropped, in
 * order ([] when none).  What is over a cap is dropped, the rest kept:
 *	summary		cut to the whole UTF-8 characters within the cap
 *			(it is always there); part "summary"
 *	note		dropped; part "note"
 *	columns		those past the 32nd dropped (and every row's
 *			cells at those positions); a name over 64 bytes
 *			becomes "" (keeping the positions); part "columns"
 *	rows		those past the 200th dropped; part "rows"
 *	cells		those past the 32nd of a row dropped; one over
 *			1 KiB becomes ""; part "rows/N/cells" (N from 0)
 *	followups	those past the 8th dropped, and each over 256
 *			bytes; part "followups"
 * A message names the part, the cap and how much went ("rows: 201 rows
 * over the cap of 200: 1 dropped").  One warning per part.
 */
jv	art_answer_cap(jv answer, jv *warnings);

/*
 * answer (borrowed) as Markdown: the summary as a paragraph; the table
 * (a header row of columns, or of empty cells when there are none, "|"
 * and newlines in cells escaped); the note in italics beneath; the
 * follow-ups as a list.  A new string jv, ending in a newline.
 */
jv	art_answer_markdown(const jv *answer);

/*
 * answer (borrowed) as a person reads it on a terminal width columns
 * wide (< 20: 80): the summary wrapped by word; the table's columns
 * aligned by display width (UTF-8 characters, not bytes), a header rule,
 * and a cell wider than its share of the width wrapped onto more lines
 * of its row; the note beneath; the follow-ups numbered "  /1 text".
 * No colour.  A new string jv, ending in a newline.
 */
jv	art_answer_text(const jv *answer, size_t width);

#endif
