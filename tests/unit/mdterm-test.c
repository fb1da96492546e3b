/* mdterm-test - Markdown drawn for a terminal, byte for byte */
#include "mdterm.h"

#include <stdio.h>
#include <string.h>

#include "tap.h"

/* Whether text drawn at width is want; prints both when not. */
static int
drawn(const char *text, size_t width, const char *want)
{
	struct art_buf out = ART_BUF_INIT;
	int r = art_mdterm_render(text, strlen(text), width, &out) == 0 &&
	    out.len == strlen(want) && memcmp(out.p, want, out.len) == 0;
	size_t i;

	if (!r) {
		printf("#   got  \"");
		for (i = 0; i < out.len; i++)
			printf(out.p[i] == '\033' ? "\\e" : out.p[i] == '\n' ?
			    "\\n" : "%c", out.p[i]);
		printf("\"\n#   want \"");
		for (i = 0; want[i] != '\0'; i++)
			printf(want[i] == '\033' ? "\\e" : want[i] == '\n' ?
			    "\\n" : "%c", want[i]);
		printf("\"\n");
	}
	art_buf_release(&out);
	return r;
}

static void
test_inline_and_blocks(void)
{
	ok(drawn("Some **bold**, *italic* and `code`.", 60,
	    "Some \033[1mbold\033[22m, \033[3mitalic\033[23m and "
	    "\033[36mcode\033[39m.\n"), "strong, emphasis and code styled");
	ok(drawn("# Plan\n\n## Steps\n\ntext", 60,
	    "\033[1m\033[4mPlan\033[0m\n\n\033[1mSteps\033[0m\n\ntext\n"),
	    "headings bold, the first level underlined; a blank line after");
	ok(drawn("see [the docs](https://x.test/d) or <https://x.test>", 60,
	    "see \033[4mthe docs\033[24m \033[2m(https://x.test/d)\033[22m or "
	    "\033[4mhttps://x.test\033[24m\n"),
	    "a link's address after its text, not twice for an autolink");
	ok(drawn("~~gone~~ &amp; &lt;b&gt;", 60,
	    "\033[9mgone\033[29m & <b>\n"), "strikethrough; entities");
	ok(drawn("<b>raw</b> html", 60, "<b>raw</b> html\n"),
	    "raw HTML is shown as text, never taken");
}

static void
test_wrapping(void)
{
	ok(drawn("one two three four five six seven", 20,
	    "one two three four\nfive six seven\n"),
	    "a paragraph wrapped at spaces to the width");
	ok(drawn("- an item that is long enough to wrap\n- b", 20,
	    "\xe2\x80\xa2 an item that is\n  long enough to\n  wrap\n"
	    "\xe2\x80\xa2 b\n"), "a list item's lines go on under its text");
	ok(drawn("supercalifragilisticexpialidocious word", 20,
	    "supercalifragilisticexpialidocious\nword\n"),
	    "a word longer than the width stands alone");
	ok(drawn("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 "
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 "
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 "
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 20,
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 "
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 "
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n"),
	    "widths count characters, not bytes");
	ok(drawn("a  \nb", 60, "a\nb\n"), "a hard break breaks the line");
}

static void
test_lists_quotes_code(void)
{
	ok(drawn("1. first\n2. second\n   - inner\n", 60,
	    "1. first\n2. second\n  \xe2\x80\xa2 inner\n"),
	    "an ordered list numbered; a nested one indented");
	ok(drawn("3. three\n4. four", 60, "3. three\n4. four\n"),
	    "an ordered list keeps its start");
	ok(drawn("- [x] done\n- [ ] to do", 60,
	    "\xe2\x80\xa2 [x] done\n\xe2\x80\xa2 [ ] to do\n"),
	    "task list items keep their boxes");
	ok(drawn("text\n\n> quoted\n\nafter", 60,
	    "text\n\n\033[2m\xe2\x94\x82 \033[22mquoted\n\nafter\n"),
	    "a quote set off by a bar");
	ok(drawn("```sh\necho a  b\n\n  x\n```\nend", 12,
	    "    \033[36mecho a  b\033[39m\n    \033[36m\033[39m\n"
	    "    \033[36m  x\033[39m\n\nend\n"),
	    "a code block indented, its spaces and lines kept, never wrapped");
	ok(drawn("a\n\n---\n\nb", 20,
	    "a\n\n\033[2m\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
	    "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
	    "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
	    "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
	    "\xe2\x94\x80\033[22m\n\nb\n"), "a thematic break a rule");
}

static void
test_tables(void)
{
	ok(drawn("| name | n |\n|:--|--:|\n| alpha | 1 |\n| b | 200 |", 60,
	    "\033[1mname\033[22m \033[2m \xe2\x94\x82 \033[22m  \033[1mn\033[22m\n"
	    "\033[2m\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
	    "\xe2\x94\x80\xe2\x94\xbc\xe2\x94\x80"
	    "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\033[22m\n"
	    "alpha\033[2m \xe2\x94\x82 \033[22m  1\n"
	    "b    \033[2m \xe2\x94\x82 \033[22m200\n"),
	    "a table's columns aligned as it says, the header bold and ruled");
	ok(drawn("| a | b |\n|---|---|\n| 1 |", 60,
	    "\033[1ma\033[22m\033[2m \xe2\x94\x82 \033[22m\033[1mb\033[22m\n"
	    "\033[2m\xe2\x94\x80\xe2\x94\x80\xe2\x94\xbc\xe2\x94\x80"
	    "\xe2\x94\x80\033[22m\n"
	    "1\033[2m \xe2\x94\x82 \033[22m \n"),
	    "a short row is padded to the table's columns");
}

static void
test_cut(void)
{
	const char *s = "para one\n\n```\ncode\n\nmore code\n";

	ok(art_mdterm_cut("no blank line yet", 17) == 0 &&
	    art_mdterm_cut("a\nb\n", 4) == 0, "no blank line: no cut");
	ok(art_mdterm_cut("a\n\nb", 4) == 3, "just past the blank line");
	ok(art_mdterm_cut(s, strlen(s)) == 10,
	    "a blank line inside an open fence is no cut");
	ok(art_mdterm_cut("```\nx\n\n```\n\nafter", 17) == 12,
	    "after the fence closes, it is");
	ok(art_mdterm_cut("~~~\n```\n\n~~~\n\nz", 15) == 14,
	    "a fence is closed by its own character only");
	s = "````md\n```python\nx\n\n```\n\n````\n\nafter";
	ok(art_mdterm_cut(s, strlen(s)) == strlen(s) - 5,
	    "a longer fence holds a shorter one and its blank lines");
	s = "```\n```python\n\n```\n\nz";
	ok(art_mdterm_cut(s, strlen(s)) == strlen(s) - 1,
	    "a run with an info string does not close a fence");
	s = "1. step\n\n   ```sh\n   a\n\n   b\n   ```\n\nz";
	ok(art_mdterm_cut(s, strlen(s)) == strlen(s) - 1,
	    "a list item's indented fence is a fence too");
}

int
main(void)
{
	test_inline_and_blocks();
	test_wrapping();
	test_lists_quotes_code();
	test_tables();
	test_cut();
	return tap_done();
}
