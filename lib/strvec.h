/* strvec.h - a growable, NULL-terminated vector of strings: an argv */
#ifndef ART_STRVEC_H
#define ART_STRVEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A struct art_strvec owns v, which holds n strings of its own (copies of
 * what was pushed) and, once anything has been pushed, a NULL after them,
 * so v can be handed to art_spawn() or execve() as it is.  cap is what v
 * has room for.  It is embedded: art_strvec_init() (or ART_STRVEC_INIT,
 * or zeroed memory) makes it empty, owning nothing, with v NULL, and
 * art_strvec_release() frees what it holds, leaving it empty again.  It
 * doubles as it grows (art_grow()), so it has no limit but memory.
 *
 * Out of memory leaves the vector as it was, returns -1 and sets nomem;
 * once nomem is set every push fails the same way until art_strvec_clear()
 * or art_strvec_release().  So a run of pushes may be checked once, at the
 * end, by nomem: v then holds a prefix of them, never a gap.  The caller
 * says so (err code "nomem") where it has a struct art_err to fill.
 * Single-threaded: a vector is one thread's at a time.
 */
struct art_strvec {
	char	**v;
	size_t	  n;
	size_t	  cap;
	bool	  nomem;	/* a push failed since the last clear */
};

#define ART_STRVEC_INIT	{ NULL, 0, 0, false }

void	art_strvec_init(struct art_strvec *);

/* Appends a copy of s: 0, or -1 (out of memory, or nomem already set). */
int	art_strvec_push(struct art_strvec *, const char *s);
/* Appends the string printf(3) would make of fmt: 0, or -1 likewise. */
int	art_strvec_pushf(struct art_strvec *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Appends a copy of each of the NULL-terminated v (NULL: none): 0, or -1
 * with the strings pushed before the failure kept. */
int	art_strvec_pushv(struct art_strvec *, const char *const *v);
/* Frees the strings and clears nomem, keeping the room: v is then {NULL}
 * when it had any room, else still NULL. */
void	art_strvec_clear(struct art_strvec *);
void	art_strvec_release(struct art_strvec *);
/*
 * The vector's v, handed to the caller, who frees each string and then v
 * with free(3); the vector is left empty, owning nothing.  NULL when
 * nothing was ever pushed (or nomem is set: a failed run of pushes, whose
 * strings are freed).
 */
char	**art_strvec_detach(struct art_strvec *);

#endif
