/* mdterm.h - Markdown drawn for a terminal: ANSI styles, wrapped lines
 *
 * A model's reply is Markdown.  art_mdterm_render() parses it with md4c
 * (CommonMark with GitHub's tables, strikethrough and task lists) and
 * draws it as a terminal shows text: headings bold (a level-1 one
 * underlined too), emphasis italic, strong bold, code cyan, a link's text
 * followed by its address, dim; paragraphs and list items wrapped at
 * spaces to the width, lists marked "•" or "N.", quotes set off by "│ ",
 * code blocks indented by four, never wrapped; tables with their columns
 * aligned, the header bold, a rule under it; a thematic break a rule.
 * Blocks are separated by one blank line; the text ends in a newline.
 *
 * Widths count characters, not bytes (a character of several UTF-8
 * bytes is one column; a wide one counts as one).  No state: any thread
 * may call it.
 */
#ifndef ART_MDTERM_H
#define ART_MDTERM_H

#include <stddef.h>

#include "buf.h"

/* The narrowest width wrapped to; a smaller one is taken as this. */
#define ART_MDTERM_MIN_WIDTH	20

/*
 * Appends text[0..n), drawn, to out, its lines at most width columns
 * where a word allows.  0, or -1 when out of memory (out may then hold
 * part of it).
 */
int	art_mdterm_render(const char *text, size_t n, size_t width,
	    struct art_buf *out);

/*
 * Where streamed Markdown text[0..n) can be cut so that what is before
 * the cut is whole blocks: just past the last blank line that is not
 * inside a fenced code block; 0 when there is none yet.
 */
size_t	art_mdterm_cut(const char *text, size_t n);

#endif
