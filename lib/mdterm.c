/* mdterm.c - Markdown drawn for a terminal: ANSI styles, wrapped lines */
#include "mdterm.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <md4c.h>

#define BOLD		"\033[1m"
#define UNBOLD		"\033[22m"
#define DIM		"\033[2m"
#define ITALIC		"\033[3m"
#define UNITALIC	"\033[23m"
#define UNDERLINE	"\033[4m"
#define UNUNDERLINE	"\033[24m"
#define STRIKE		"\033[9m"
#define UNSTRIKE	"\033[29m"
#define CYAN		"\033[36m"
#define UNCOLOR		"\033[39m"
#define RESET		"\033[0m"

#define MAX_DEPTH	16	/* lists and quotes nested deeper are flat */
#define MAX_COLS	64	/* a table's columns drawn */

struct list {
	bool		 ordered;
	unsigned	 next;		/* an ordered list's next number */
};

struct md {
	struct art_buf	*out;
	size_t		 width;
	struct art_buf	 in;		/* the block's text, styles and all */
	bool		 code;		/* inside a code block */
	bool		 need_blank;	/* a blank line before the next block */
	int		 quotes;
	struct list	 lists[MAX_DEPTH];
	int		 nlists;
	char		 marker[16];	/* a list item's, not drawn yet */
	size_t		 link_at;	/* where a link's text began in in */
	struct art_buf	 href;
	/* A table: its cells, row by row. */
	bool		 table;
	struct art_buf	*cells;
	size_t		 ncells, cap;
	unsigned	 cols, col, head_cells;
	bool		 in_head;
	MD_ALIGN	 align[MAX_COLS];
	bool		 nomem;
};

static void
add(struct md *m, struct art_buf *b, const char *s, size_t n)
{
	if (art_buf_add(b, s, n) == -1)
		m->nomem = true;
}

static void
adds(struct md *m, struct art_buf *b, const char *s)
{
	add(m, b, s, strlen(s));
}

/* Columns s[0..n) takes: characters, escape sequences left out. */
static size_t
columns(const char *s, size_t n)
{
	size_t i, w = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '\033' && i + 1 < n && s[i + 1] == '[') {
			for (i += 2; i < n && s[i] != 'm'; i++)
				;
			continue;
		}
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	}
	return w;
}

/* The prefix of a line: a bar for each quote, two spaces a list level. */
static void
prefix(struct md *m, struct art_buf *b, bool first)
{
	int i, lists = m->nlists;

	for (i = 0; i < m->quotes && i < MAX_DEPTH; i++)
		adds(m, b, DIM "\xe2\x94\x82 " UNBOLD);
	for (i = 1; i < lists && i < MAX_DEPTH; i++)
		adds(m, b, "  ");
	if (lists > 0 && first && m->marker[0] != '\0')
		adds(m, b, m->marker);
	else if (lists > 0)
		for (i = 0; i < (int)columns(m->marker, strlen(m->marker)) ||
		    (m->marker[0] == '\0' && i < 2); i++)
			adds(m, b, " ");
}

static void
blank_line(struct md *m)
{
	int i;

	if (!m->need_blank)
		return;
	for (i = 0; i < m->quotes && i < MAX_DEPTH; i++)
		adds(m, m->out, DIM "\xe2\x94\x82" UNBOLD);
	adds(m, m->out, "\n");
	m->need_blank = false;
}

/*
 * Draws s[0..n), words at spaces, each line at most the width where a
 * word allows, a '\n' in s a line break; every line after its prefix.
 */
static void
wrap(struct md *m, const char *s, size_t n)
{
	struct art_buf first = ART_BUF_INIT, rest = ART_BUF_INIT;
	size_t i = 0, j, w, col;
	bool start = true;

	prefix(m, &first, true);
	prefix(m, &rest, false);
	add(m, m->out, first.p != NULL ? first.p : "", first.len);
	col = columns(first.p != NULL ? first.p : "", first.len);
	while (i < n) {
		if (s[i] == ' ') {
			i++;
			continue;
		}
		if (s[i] == '\n') {
			adds(m, m->out, "\n");
			add(m, m->out, rest.p != NULL ? rest.p : "", rest.len);
			col = columns(rest.p != NULL ? rest.p : "", rest.len);
			start = true;
			i++;
			continue;
		}
		for (j = i; j < n && s[j] != ' ' && s[j] != '\n'; j++)
			;
		w = columns(s + i, j - i);
		if (!start && w > 0 && col + 1 + w > m->width) {
			adds(m, m->out, "\n");
			add(m, m->out, rest.p != NULL ? rest.p : "", rest.len);
			col = columns(rest.p != NULL ? rest.p : "", rest.len);
			start = true;
		}
		if (!start && w > 0 && i > 0 && s[i - 1] == ' ') {
			adds(m, m->out, " ");
			col++;
		}
		add(m, m->out, s + i, j - i);
		col += w;
		if (w > 0)
			start = false;
		i = j;
	}
	adds(m, m->out, "\n");
	art_buf_release(&first);
	art_buf_release(&rest);
}

/* The block's text drawn, if any, and forgotten. */
static void
flush(struct md *m)
{
	if (m->in.len == 0 && m->marker[0] == '\0')
		return;
	blank_line(m);
	wrap(m, m->in.p != NULL ? m->in.p : "", m->in.len);
	art_buf_clear(&m->in);
	m->marker[0] = '\0';
}

/* A code block's lines, indented by four, in cyan, never wrapped. */
static void
draw_code(struct md *m)
{
	const char *s = m->in.p != NULL ? m->in.p : "", *nl;
	size_t n = m->in.len;
	struct art_buf pre = ART_BUF_INIT;

	blank_line(m);
	prefix(m, &pre, false);
	while (n > 0 && s[n - 1] == '\n')
		n--;
	while (n > 0) {
		nl = memchr(s, '\n', n);
		add(m, m->out, pre.p != NULL ? pre.p : "", pre.len);
		adds(m, m->out, "    " CYAN);
		add(m, m->out, s, nl != NULL ? (size_t)(nl - s) : n);
		adds(m, m->out, UNCOLOR "\n");
		if (nl == NULL)
			break;
		n -= (size_t)(nl + 1 - s);
		s = nl + 1;
	}
	art_buf_release(&pre);
	art_buf_clear(&m->in);
}

static void
draw_rule(struct md *m, size_t w)
{
	size_t i;

	blank_line(m);
	adds(m, m->out, DIM);
	for (i = 0; i < w; i++)
		adds(m, m->out, "\xe2\x94\x80");
	adds(m, m->out, UNBOLD "\n");
}

/* One cell, padded to w columns as its column is aligned. */
static void
draw_cell(struct md *m, const struct art_buf *c, size_t w, MD_ALIGN a,
    bool head)
{
	size_t have = columns(c->p != NULL ? c->p : "", c->len), pad, i;
	size_t before = a == MD_ALIGN_RIGHT ? w - have : a == MD_ALIGN_CENTER ?
	    (w - have) / 2 : 0;

	pad = w - have - before;
	for (i = 0; i < before; i++)
		adds(m, m->out, " ");
	if (head)
		adds(m, m->out, BOLD);
	add(m, m->out, c->p != NULL ? c->p : "", c->len);
	if (head)
		adds(m, m->out, UNBOLD);
	for (i = 0; i < pad; i++)
		adds(m, m->out, " ");
}

/* The table: columns as wide as their widest cell, the header ruled. */
static void
draw_table(struct md *m)
{
	struct art_buf pre = ART_BUF_INIT;
	size_t w[MAX_COLS] = { 0 }, i, k, cw;
	unsigned cols = m->cols > MAX_COLS ? MAX_COLS : m->cols, c;

	if (cols == 0)
		return;
	for (i = 0; i < m->ncells; i++) {
		cw = columns(m->cells[i].p != NULL ? m->cells[i].p : "",
		    m->cells[i].len);
		if ((c = (unsigned)(i % m->cols)) < cols && cw > w[c])
			w[c] = cw;
	}
	blank_line(m);
	prefix(m, &pre, false);
	for (i = 0; i < m->ncells; i += m->cols) {
		add(m, m->out, pre.p != NULL ? pre.p : "", pre.len);
		for (c = 0; c < cols && i + c < m->ncells; c++) {
			if (c > 0)
				adds(m, m->out, DIM " \xe2\x94\x82 " UNBOLD);
			draw_cell(m, &m->cells[i + c], w[c], m->align[c],
			    i < m->head_cells);
		}
		adds(m, m->out, "\n");
		if (i + m->cols == m->head_cells) {
			add(m, m->out, pre.p != NULL ? pre.p : "", pre.len);
			adds(m, m->out, DIM);
			for (c = 0; c < cols; c++) {
				if (c > 0)
					adds(m, m->out, "\xe2\x94\x80\xe2\x94\xbc"
					    "\xe2\x94\x80");
				for (k = 0; k < w[c]; k++)
					adds(m, m->out, "\xe2\x94\x80");
			}
			adds(m, m->out, UNBOLD "\n");
		}
	}
	art_buf_release(&pre);
	for (i = 0; i < m->ncells; i++)
		art_buf_release(&m->cells[i]);
	m->ncells = 0;
}

static int
enter_block(MD_BLOCKTYPE type, void *detail, void *ctx)
{
	struct md *m = ctx;
	struct list *l;
	MD_BLOCK_LI_DETAIL *li;

	switch (type) {
	case MD_BLOCK_QUOTE:
		flush(m);
		blank_line(m);
		m->quotes++;
		break;
	case MD_BLOCK_UL:
	case MD_BLOCK_OL:
		flush(m);
		if (m->nlists < MAX_DEPTH) {
			l = &m->lists[m->nlists];
			l->ordered = type == MD_BLOCK_OL;
			l->next = l->ordered ?
			    ((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
		}
		m->nlists++;
		break;
	case MD_BLOCK_LI:
		flush(m);
		li = detail;
		l = &m->lists[(m->nlists > MAX_DEPTH ? MAX_DEPTH : m->nlists) -
		    1];
		if (l->ordered)
			snprintf(m->marker, sizeof(m->marker), "%u. ",
			    l->next++);
		else
			snprintf(m->marker, sizeof(m->marker), "\xe2\x80\xa2 ");
		if (li->is_task)
			snprintf(m->marker + strlen(m->marker),
			    sizeof(m->marker) - strlen(m->marker), "[%c] ",
			    li->task_mark == ' ' ? ' ' : 'x');
		break;
	case MD_BLOCK_H:
		flush(m);
		adds(m, &m->in, BOLD);
		if (((MD_BLOCK_H_DETAIL *)detail)->level == 1)
			adds(m, &m->in, UNDERLINE);
		break;
	case MD_BLOCK_CODE:
		flush(m);
		m->code = true;
		break;
	case MD_BLOCK_TABLE:
		flush(m);
		m->table = true;
		m->cols = ((MD_BLOCK_TABLE_DETAIL *)detail)->col_count;
		m->ncells = m->head_cells = 0;
		break;
	case MD_BLOCK_THEAD:
		m->in_head = true;
		break;
	case MD_BLOCK_TR:
		m->col = 0;
		break;
	case MD_BLOCK_TH:
	case MD_BLOCK_TD:
		art_buf_clear(&m->in);
		if (m->col < MAX_COLS)
			m->align[m->col] = ((MD_BLOCK_TD_DETAIL *)detail)->align;
		break;
	case MD_BLOCK_P:
		/* A list item's paragraph goes on its marker's line. */
		if (m->marker[0] == '\0')
			flush(m);
		break;
	default:
		break;
	}
	return m->nomem ? -1 : 0;
}

static int
leave_block(MD_BLOCKTYPE type, void *detail, void *ctx)
{
	struct md *m = ctx;

	(void)detail;
	switch (type) {
	case MD_BLOCK_QUOTE:
		flush(m);
		m->quotes--;
		m->need_blank = true;
		break;
	case MD_BLOCK_UL:
	case MD_BLOCK_OL:
		flush(m);
		if (--m->nlists == 0)
			m->need_blank = true;
		break;
	case MD_BLOCK_LI:
		flush(m);
		break;
	case MD_BLOCK_H:
		adds(m, &m->in, RESET);
		flush(m);
		m->need_blank = true;
		break;
	case MD_BLOCK_P:
		flush(m);
		if (m->nlists == 0)
			m->need_blank = true;
		break;
	case MD_BLOCK_CODE:
		m->code = false;
		draw_code(m);
		if (m->nlists == 0)
			m->need_blank = true;
		break;
	case MD_BLOCK_HTML:
		flush(m);
		break;
	case MD_BLOCK_HR:
		draw_rule(m, m->width < 40 ? m->width : 40);
		m->need_blank = true;
		break;
	case MD_BLOCK_THEAD:
		m->in_head = false;
		m->head_cells = (unsigned)m->ncells;
		break;
	case MD_BLOCK_TH:
	case MD_BLOCK_TD:
		if (art_grow(&m->cells, &m->cap, m->ncells + 1,
		    sizeof(*m->cells)) == -1) {
			m->nomem = true;
			break;
		}
		m->cells[m->ncells++] = m->in;
		art_buf_init(&m->in);
		m->col++;
		break;
	case MD_BLOCK_TR:
		/* A short row is padded to the table's columns. */
		for (; m->col < m->cols; m->col++) {
			if (art_grow(&m->cells, &m->cap, m->ncells + 1,
			    sizeof(*m->cells)) == -1) {
				m->nomem = true;
				break;
			}
			art_buf_init(&m->cells[m->ncells++]);
		}
		break;
	case MD_BLOCK_TABLE:
		m->table = false;
		draw_table(m);
		if (m->nlists == 0)
			m->need_blank = true;
		break;
	default:
		break;
	}
	return m->nomem ? -1 : 0;
}

static int
enter_span(MD_SPANTYPE type, void *detail, void *ctx)
{
	struct md *m = ctx;
	MD_SPAN_A_DETAIL *a;

	switch (type) {
	case MD_SPAN_EM: adds(m, &m->in, ITALIC); break;
	case MD_SPAN_STRONG: adds(m, &m->in, BOLD); break;
	case MD_SPAN_CODE: adds(m, &m->in, CYAN); break;
	case MD_SPAN_DEL: adds(m, &m->in, STRIKE); break;
	case MD_SPAN_U: adds(m, &m->in, UNDERLINE); break;
	case MD_SPAN_IMG: adds(m, &m->in, "[image: "); break;
	case MD_SPAN_A:
		a = detail;
		art_buf_clear(&m->href);
		add(m, &m->href, a->href.text, a->href.size);
		m->link_at = m->in.len;
		adds(m, &m->in, UNDERLINE);
		break;
	default:
		break;
	}
	return m->nomem ? -1 : 0;
}

static int
leave_span(MD_SPANTYPE type, void *detail, void *ctx)
{
	struct md *m = ctx;
	size_t at, n;

	(void)detail;
	switch (type) {
	case MD_SPAN_EM: adds(m, &m->in, UNITALIC); break;
	case MD_SPAN_STRONG: adds(m, &m->in, UNBOLD); break;
	case MD_SPAN_CODE: adds(m, &m->in, UNCOLOR); break;
	case MD_SPAN_DEL: adds(m, &m->in, UNSTRIKE); break;
	case MD_SPAN_U: adds(m, &m->in, UNUNDERLINE); break;
	case MD_SPAN_IMG: adds(m, &m->in, "]"); break;
	case MD_SPAN_A:
		adds(m, &m->in, UNUNDERLINE);
		/* An address that is its own text is not said twice. */
		at = m->link_at + strlen(UNDERLINE);
		n = m->in.len - strlen(UNUNDERLINE);
		if (m->href.len > 0 && !(n - at == m->href.len &&
		    memcmp(m->in.p + at, m->href.p, m->href.len) == 0)) {
			adds(m, &m->in, " " DIM "(");
			add(m, &m->in, m->href.p, m->href.len);
			adds(m, &m->in, ")" UNBOLD);
		}
		break;
	default:
		break;
	}
	return m->nomem ? -1 : 0;
}

/* The few entities a reply uses, as characters; others as written. */
static void
entity(struct md *m, const char *s, size_t n)
{
	static const char *const names[][2] = { { "&amp;", "&" },
	    { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" },
	    { "&#39;", "'" }, { "&nbsp;", " " } };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i][0]) == n && memcmp(s, names[i][0], n) == 0) {
			adds(m, &m->in, names[i][1]);
			return;
		}
	add(m, &m->in, s, n);
}

static int
text(MD_TEXTTYPE type, const MD_CHAR *s, MD_SIZE n, void *ctx)
{
	struct md *m = ctx;

	switch (type) {
	case MD_TEXT_BR: adds(m, &m->in, "\n"); break;
	case MD_TEXT_SOFTBR: adds(m, &m->in, " "); break;
	case MD_TEXT_NULLCHAR: adds(m, &m->in, "\xef\xbf\xbd"); break;
	case MD_TEXT_ENTITY: entity(m, s, n); break;
	default: add(m, &m->in, s, n); break;
	}
	return m->nomem ? -1 : 0;
}

int
art_mdterm_render(const char *s, size_t n, size_t width, struct art_buf *out)
{
	struct md m = { .out = out, .width = width < ART_MDTERM_MIN_WIDTH ?
	    ART_MDTERM_MIN_WIDTH : width };
	MD_PARSER p = { 0, MD_DIALECT_GITHUB | MD_FLAG_NOHTML, enter_block,
	    leave_block, enter_span, leave_span, text, NULL, NULL };
	size_t i;
	int r;

	art_buf_init(&m.in);
	art_buf_init(&m.href);
	r = md_parse(s, (MD_SIZE)n, &p, &m);
	flush(&m);
	for (i = 0; i < m.ncells; i++)
		art_buf_release(&m.cells[i]);
	free(m.cells);
	art_buf_release(&m.in);
	art_buf_release(&m.href);
	return r != 0 || m.nomem ? -1 : 0;
}

/*
 * The fence a line s[0..n) holds: its character and length (a run of 3
 * or more of one of '`' and '~' after blanks; any indent, since a list
 * item's fence is indented), with closing set when only blanks follow
 * it.  0 when it holds none.
 */
static size_t
fence_of(const char *s, size_t n, char *ch, bool *closing)
{
	size_t i = 0, run, k;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n || (s[i] != '`' && s[i] != '~'))
		return 0;
	for (run = 0; i + run < n && s[i + run] == s[i]; run++)
		;
	if (run < 3)
		return 0;
	*ch = s[i];
	for (k = i + run; k < n && (s[k] == ' ' || s[k] == '\t' ||
	    s[k] == '\r'); k++)
		;
	*closing = k == n;
	return run;
}

size_t
art_mdterm_cut(const char *s, size_t n)
{
	size_t i = 0, j, k, cut = 0, open = 0, run;
	char fence = 0, ch = 0;
	bool closing = false;

	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);

		if (nl == NULL)
			break;
		j = (size_t)(nl - s);
		run = fence_of(s + i, j - i, &ch, &closing);
		/* Closed by a run of its own character as long, alone. */
		if (open > 0 && run >= open && ch == fence && closing)
			open = 0;
		else if (open == 0 && run > 0) {
			open = run;
			fence = ch;
		}
		for (k = i; k < j && (s[k] == ' ' || s[k] == '\t' ||
		    s[k] == '\r'); k++)
			;
		if (k == j && open == 0 && i > 0)
			cut = j + 1;
		i = j + 1;
	}
	return cut;
}
