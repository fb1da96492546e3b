/* diag.h - the program's name and its one-line messages on stderr */
#ifndef ART_DIAG_H
#define ART_DIAG_H

enum {
	ART_EXIT_OK = 0,
	ART_EXIT_FAIL = 1,	/* a fatal error stopped the run */
	ART_EXIT_USAGE = 2	/* bad option or argument; nothing was read */
};

/* Records the program's name (argv[0] without its directory), once. */
void		art_diag_init(const char *argv0);
/* The name recorded by art_diag_init(); "agentrt" before it. */
const char	*art_diag_name(void);
/* "<name>: <message>\n" on stderr. */
void		art_warn(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2)));
/* art_warn(), then exit(status). */
_Noreturn void	art_die(int status, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));

#endif
