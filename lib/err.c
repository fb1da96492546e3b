/* err.c - one failure, as a code and a one-line message */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
art_err_set(struct art_err *err, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int
art_err_prefix(struct art_err *err, const char *fmt, ...)
{
	char head[sizeof(err->msg)], both[2 * sizeof(err->msg) + 2];
	va_list ap;
	size_t n;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	snprintf(both, sizeof(both), "%s: %s", head, err->msg);
	n = strlen(both);
	if (n >= sizeof(err->msg))
		n = sizeof(err->msg) - 1;
	memcpy(err->msg, both, n);
	err->msg[n] = '\0';
	return -1;
}

void
art_err_clear(struct art_err *err)
{
	err->code = NULL;
	err->msg[0] = '\0';
}

int
art_err_is(const struct art_err *err, const char *code)
{
	return err != NULL && err->code != NULL && strcmp(err->code, code) == 0;
}
