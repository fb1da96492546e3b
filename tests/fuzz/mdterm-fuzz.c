/* mdterm-fuzz - a reply's Markdown drawn for a terminal, and where to cut */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mdterm.h"

/*
 * The input is a width byte, then Markdown.  Drawing must succeed and
 * end in a newline (or draw nothing); a cut must fall at the end of
 * the text or just past a newline; and the text cut in two and drawn
 * in two parts must draw without fault too, as a stream is.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct art_buf out = ART_BUF_INIT;
	const char *s = (const char *)data + 1;
	size_t n, cut, width;

	if (size < 1)
		return 0;
	width = data[0];
	n = size - 1;
	if (art_mdterm_render(s, n, width, &out) == -1)
		abort();
	if (out.len > 0 && out.p[out.len - 1] != '\n')
		abort();
	cut = art_mdterm_cut(s, n);
	if (cut > n || (cut > 0 && s[cut - 1] != '\n'))
		abort();
	art_buf_clear(&out);
	if (art_mdterm_render(s, cut, width, &out) == -1 ||
	    art_mdterm_render(s + cut, n - cut, width, &out) == -1)
		abort();
	art_buf_release(&out);
	return 0;
}
