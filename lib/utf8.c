/* utf8.c - checking UTF-8, and cutting it only between characters */
#include "utf8.h"

#define CONT(c)	(((unsigned char)(c) & 0xc0) == 0x80)

bool
art_utf8_valid(const char *s, size_t n, size_t *bad)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo, hi;
	size_t i = 0, len, k;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		/* The second byte's range rules out overlong forms,
		 * surrogates and code points past U+10FFFF. */
		lo = 0x80, hi = 0xbf;
		if (p[i] >= 0xc2 && p[i] <= 0xdf)
			len = 2;
		else if (p[i] >= 0xe0 && p[i] <= 0xef) {
			len = 3;
			lo = p[i] == 0xe0 ? 0xa0 : lo;
			hi = p[i] == 0xed ? 0x9f : hi;
		} else if (p[i] >= 0xf0 && p[i] <= 0xf4) {
			len = 4;
			lo = p[i] == 0xf0 ? 0x90 : lo;
			hi = p[i] == 0xf4 ? 0x8f : hi;
		} else
			goto fail;
		if (n - i < len || p[i + 1] < lo || p[i + 1] > hi)
			goto fail;
		for (k = 2; k < len; k++)
			if (!CONT(p[i + k]))
				goto fail;
		i += len;
	}
	return true;
fail:
	if (bad != NULL)
		*bad = i;
	return false;
}

size_t
art_utf8_whole(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = n, need;

	while (i > 0 && n - i < 4 && CONT(p[i - 1]))
		i--;
	if (i == 0 || p[i - 1] < 0xc0)
		return n;
	need = p[i - 1] >= 0xf0 ? 4 : p[i - 1] >= 0xe0 ? 3 : 2;
	return n - (i - 1) >= need ? n : i - 1;
}

size_t
art_utf8_back(const char *s, size_t i)
{
	size_t j = i;

	while (j > 0 && i - j < 3 && CONT(s[j]))
		j--;
	return CONT(s[j]) ? i : j;
}

size_t
art_utf8_fwd(const char *s, size_t i, size_t n)
{
	size_t j = i;

	while (j < n && j - i < 3 && CONT(s[j]))
		j++;
	return j;
}
