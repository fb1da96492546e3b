/* tap.h - the Test Anything Protocol, as automake's tap-driver.sh reads it */
#ifndef ART_TAP_H
#define ART_TAP_H
#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

/* One test point; returns cond so a test can stop early on failure. */
#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
static int __attribute__((format(printf, 4, 5), unused))
tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		printf("#   failed at %s:%d\n", file, line);
		tap_failed++;
	}
	fflush(stdout);
	return cond;
}

/* A test point that cannot run here, and why: it counts as skipped. */
static void __attribute__((format(printf, 1, 2), unused))
tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Prints the plan; the exit status says whether every point passed. */
static int __attribute__((unused))
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
#endif
