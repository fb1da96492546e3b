/* diag.c - the program's name and its one-line messages on stderr */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one mutable global of libagentrt, written once by main. */
static const char *progname = "agentrt";

void
art_diag_init(const char *argv0)
{
	const char *slash;

	if (argv0 == NULL || *argv0 == '\0')
		return;
	slash = strrchr(argv0, '/');
	progname = slash != NULL ? slash + 1 : argv0;
}

const char *
art_diag_name(void)
{
	return progname;
}

static void
vwarn(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	/* One line, whatever the message held. */
	line[strcspn(line, "\n")] = '\0';
	fprintf(stderr, "%s: %s\n", progname, line);
	fflush(stderr);
}

void
art_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
art_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}
