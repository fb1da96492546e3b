/* opt.c - option values every command reads the same way */
#include "opt.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int
art_opt_size(const char *s, size_t *out)
{
	unsigned long long v;
	int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v == 0 ||
	    v > (SIZE_MAX >> shift))
		return -1;
	*out = (size_t)v << shift;
	return 0;
}
