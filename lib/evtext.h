/* evtext.h - client events and log events as a person reads them
 *
 * The one renderer of the client events agentrt-session run writes
 * (--events; man/agentrt-session.1 EVENTS): agentrt-shell draws a turn
 * with it, and run --events-format text writes the same text to a file
 * or terminal.  Events go in one at a time, in the order they came; each
 * appends its text to a buffer the caller writes out, so this module
 * never prints.  A renderer keeps what the order needs: whether a
 * streamed line is still open, which replies were streamed (so they are
 * not drawn twice), the names of sub-agent sessions, the last error said.
 *
 * Tool calls and results are drawn from the recorded messages, not from
 * tool_call and tool_result events: a call of a sub-agent is a message
 * too, but has no tool events.  Lines are cut to the terminal's width,
 * never inside a UTF-8 sequence; a reply's text is drawn whole.
 *
 * A structured answer (lib/answer.h) is drawn from its structured_answer
 * event, as art_answer_text() lays it out, under ART_EVTEXT_TEXT: its
 * message, which carries "structured_answer" beside the raw JSON content,
 * draws no text, and the completion after it (whose text is the summary)
 * draws none either.  Its JSON is not streamed: tokens of a reply whose
 * first character but blanks is "{" are held back, and if the message
 * then turns out to be no answer, its content is drawn whole.  A warning
 * event is "warning: MESSAGE", dim, always drawn, to err as an error is.
 *
 * A renderer is one caller's, in one thread.
 */
#ifndef ART_EVTEXT_H
#define ART_EVTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <jv.h>

#include "buf.h"

/* What a renderer draws (struct art_evtext_opts show); errors always. */
#define ART_EVTEXT_TEXT		0x01	/* the model's text, tokens as they come */
/*
 * Tool calls and results; security notes; and an autonomous turn's plan:
 * its todos when decomposed ("Plan:", "  [ ] title"), a todo made active
 * ("  [>] title", dim) and done ("  [x] title"), and why a plan stopped
 * when no completion will say it (a sub-agent's, or a turn that parks).
 */
#define ART_EVTEXT_TOOLS	0x02
#define ART_EVTEXT_USER		0x04	/* user messages, "> text" */
#define ART_EVTEXT_USAGE	0x08	/* the turn's usage line at its end */
#define ART_EVTEXT_PARKED	0x10	/* a turn parked on an interrupt */
/*
 * Errors refusing an input (interrupted, no_interrupt, bad_input,
 * turn_already_active): agentrt-session says these on its stderr, so a
 * renderer whose text shows beside that stderr leaves them out.
 */
#define ART_EVTEXT_REFUSALS	0x20
/*
 * The error of a turn that ended with a code (a limit, the security
 * pipeline, a store that failed): agentrt-session says it on its stderr
 * too ("turn failed (CODE): ..."), so, as for refusals, a renderer whose
 * text shows beside that stderr leaves it out.
 */
#define ART_EVTEXT_ENDED	0x40

/* SGR codes, for a caller drawing its own lines in the same colours. */
#define ART_EVTEXT_DIM		"\033[2m"
#define ART_EVTEXT_RED		"\033[31m"
#define ART_EVTEXT_CYAN		"\033[36m"
#define ART_EVTEXT_BOLD		"\033[1m"
#define ART_EVTEXT_RESET	"\033[0m"

struct art_evtext_opts {
	unsigned	 show;		/* ART_EVTEXT_* */
	bool		 color;		/* ANSI colour */
	/*
	 * The root's replies drawn as Markdown (lib/mdterm), a streamed one
	 * a block at a time as its blocks are whole; else as written.
	 */
	bool		 markdown;
	size_t		 width;		/* the terminal's columns; < 20: 80 */
	/*
	 * The agent of sub-agent session sid, for the "[alpha] " before its
	 * lines; NULL when unknown ("sub-agent" is shown).  Asked once per
	 * session; the string need last only until it returns.  NULL: none.
	 */
	const char	*(*agent_of)(void *ctx, const char *sid);
	void		*ctx;
};

struct art_evtext;

/* A renderer (opts copied), or NULL when out of memory. */
struct art_evtext *art_evtext_new(const struct art_evtext_opts *);
void	art_evtext_free(struct art_evtext *);

/*
 * The session whose turn is drawn: its lines have no prefix, and only
 * its tokens stream (a sub-agent's would interleave).  Unset, the first
 * turn.started sets it.  art_evtext_root() returns "" while unset; the
 * string lives as long as the renderer.
 */
void	art_evtext_set_root(struct art_evtext *, const char *sid);
const char *art_evtext_root(const struct art_evtext *);

/*
 * Appends the text of ev (borrowed) to out, and of an error to err,
 * which may be out: then the error is drawn in the flow (red, after the
 * sub-agent prefix); in a buffer of its own it is a plain line "error:
 * MESSAGE", for the caller's stderr.  An error said just before, or in
 * the turn's completion after, is said once.  -1 when out of memory
 * (out and err hold some of the text).
 */
int	art_evtext_event(struct art_evtext *, const jv *ev, struct art_buf *out,
	    struct art_buf *err);
/* Ends a streamed line, so other text starts at column 0: 0 or -1. */
int	art_evtext_break(struct art_evtext *, struct art_buf *out);
/* Is a streamed line open (the cursor not at column 0)? */
bool	art_evtext_is_midline(const struct art_evtext *);

/*
 * All of s on one line (newlines and tabs as spaces), cut with "…" to fit
 * width columns (< 20: 80) after used; never cuts a UTF-8 sequence.  A
 * string the caller frees, or NULL when out of memory.
 */
char	*art_evtext_line(const char *s, size_t used, size_t width);

/*
 * One line (with its newline) for a recorded event, an envelope as
 * agentrt-session log prints it: "SEQ  HH:MM:SS  TYPE  summary", cut to
 * width, dim parts in colour.  0, or -1 when out of memory.
 */
int	art_evtext_log_line(const jv *envelope, bool color, size_t width,
	    struct art_buf *out);

#endif
