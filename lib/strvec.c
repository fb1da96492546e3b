/* strvec.c - a growable, NULL-terminated vector of strings: an argv */
#include "strvec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void
art_strvec_init(struct art_strvec *sv)
{
	sv->v = NULL;
	sv->n = sv->cap = 0;
	sv->nomem = false;
}

/* Takes s, malloc'd (NULL: out of memory), as the last string; 0 or -1. */
static int
take(struct art_strvec *sv, char *s)
{
	if (s == NULL || sv->nomem ||
	    art_grow(&sv->v, &sv->cap, sv->n + 2, sizeof(*sv->v)) == -1) {
		free(s);
		sv->nomem = true;
		return -1;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return 0;
}

int
art_strvec_push(struct art_strvec *sv, const char *s)
{
	if (sv->nomem)
		return -1;
	return take(sv, strdup(s));
}

int
art_strvec_pushf(struct art_strvec *sv, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (sv->nomem)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return take(sv, NULL);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return take(sv, s);
}

int
art_strvec_pushv(struct art_strvec *sv, const char *const *v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		if (art_strvec_push(sv, v[i]) == -1)
			return -1;
	return 0;
}

void
art_strvec_clear(struct art_strvec *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	if (sv->v != NULL)
		sv->v[0] = NULL;
	sv->n = 0;
	sv->nomem = false;
}

char **
art_strvec_detach(struct art_strvec *sv)
{
	char **v = sv->v;

	if (sv->nomem || sv->n == 0) {
		art_strvec_release(sv);
		return NULL;
	}
	art_strvec_init(sv);
	return v;
}

void
art_strvec_release(struct art_strvec *sv)
{
	art_strvec_clear(sv);
	free(sv->v);
	art_strvec_init(sv);
}
