/* err.h - one failure, as a code and a one-line message */
#ifndef ART_ERR_H
#define ART_ERR_H

/*
 * lib/ reports and never prints: a function that can fail takes a
 * struct art_err * last and fills it.  code is a static string that names
 * the kind of failure ("store", "bad_json", "not_found"); it becomes the
 * "code" of an error line.  msg is "<what>: <why>", no prefix, no newline.
 */
struct art_err {
	const char	*code;
	char		 msg[256];
};

/* Fills err (which may be NULL) and returns -1, so a failure is one line. */
int	art_err_set(struct art_err *, const char *code, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Puts "what: " in front of the message already in err; returns -1. */
int	art_err_prefix(struct art_err *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	art_err_clear(struct art_err *);
/* True when err holds the given code. */
int	art_err_is(const struct art_err *, const char *code);

#endif
