/* base64.c - RFC 4648 base64, decoded strictly */
#include "base64.h"

#include <errno.h>
#include <stdint.h>

/* c's value in the standard alphabet, or -1. */
static int
value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int
art_base64_decode(const char *s, size_t n, struct art_buf *out)
{
	size_t len = out->len, i, letters;
	uint32_t acc = 0;
	int v, bits = 0;
	char c;

	/* Padding: up to two, and only to make a whole quantum. */
	for (letters = n; letters > 0 && s[letters - 1] == '='; letters--)
		;
	if (n - letters > 2 || (n != letters && n % 4 != 0) ||
	    letters % 4 == 1)
		goto bad;
	if (art_buf_reserve(out, letters / 4 * 3 + 2) == -1) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < letters; i++) {
		if ((v = value((unsigned char)s[i])) < 0)
			goto bad;
		acc = acc << 6 | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			c = (char)(acc >> bits & 0xff);
			art_buf_add(out, &c, 1);	/* room reserved */
		}
	}
	/* The bits a short last quantum leaves over are zero. */
	if ((acc & ((1u << bits) - 1)) != 0)
		goto bad;
	return 0;
bad:
	out->len = len;
	if (out->p != NULL)
		out->p[len] = '\0';
	errno = EINVAL;
	return -1;
}
