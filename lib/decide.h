/* decide.h - the decision step: answer decision.request lines */
#ifndef ART_DECIDE_H
#define ART_DECIDE_H

#include <stdbool.h>
#include <stddef.h>

#include <jv.h>

#include "err.h"
#include "ndjson.h"

/*
 * A decider answers decision.request lines, either with the request's own
 * "proposed" (no program) or with what a jq program makes of the request.
 * Every other line, and every request it has no answer for, is the
 * caller's to pass on unchanged.
 */
struct art_decide;

enum art_decide_verdict {
	ART_DECIDE_PASS,	/* no answer: pass the line on unchanged */
	ART_DECIDE_ANSWER,	/* *out is the decision.response line */
	/* *out is an error line; pass the line on after it, so the
	 * engine sees both */
	ART_DECIDE_FAIL
};

struct art_decide_conf {
	/* The jq program's text; NULL answers with proposals. */
	const char	*program;
	/* {name: value}: the program's $name and $ARGS.named; jv_null()
	 * for none.  Copied, not consumed. */
	jv		 vars;
	/* Answer only requests whose agent_id is one of these (borrowed
	 * for the decider's life); nagents 0 answers every agent. */
	const char *const *agents;
	size_t		 nagents;
	/*
	 * A worker that answers instead of the proposal or a program (then
	 * program must be NULL): called with each request this decider
	 * answers (checked to have string decision_id and session_id) and
	 * its bytes (raw, rawlen); a line by reference (DESIGN §2.1) is
	 * first read back whole from the store it names, and the worker
	 * gets that line and its text.  Returns what art_decide_line()
	 * returns.  NULL for none.
	 */
	enum art_decide_verdict (*ask)(void *arg, const jv *line,
		    const char *raw, size_t rawlen, jv *out, struct art_err *);
	void		*ask_arg;
	/* jq's debug builtin hands its value here (consumed); may be NULL. */
	void		(*debug)(void *arg, jv value);
	void		*debug_arg;
};

/*
 * A decider, its program compiled once for the whole run.  When msgs is
 * not NULL, *msgs is always set to an array (the caller owns it) of jq's
 * compile messages, one string each, in the order jq reported them; a
 * message may span several lines.  Returns NULL with err code
 * "jq_compile" when the program does not compile.  jq's input and inputs
 * have no input to read (they raise an error), and modules cannot be
 * imported.
 */
struct art_decide *art_decide_new(const struct art_decide_conf *, jv *msgs,
	    struct art_err *);
void	art_decide_free(struct art_decide *);

/*
 * What to do with one bus line (borrowed).  For ART_DECIDE_ANSWER and
 * ART_DECIDE_FAIL, *out is a new line the caller owns; for ART_DECIDE_PASS
 * it is left alone.  ART_DECIDE_FAIL also fills err (code "jq_error",
 * "bad_response" or "bad_request"; the message names the decision), with
 * the same text as the error line's message; that line's "input" is the
 * request's first ART_NDJSON_EXCERPT bytes (raw's, or libjq's text of
 * line when raw is NULL).  *extra is set true when
 * the program yielded more than one value (the first one counts) and
 * false otherwise.
 */
enum art_decide_verdict art_decide_line(struct art_decide *, const jv *line,
	    jv *out, bool *extra, struct art_err *);
/* As art_decide_line(), with the line's bytes for a worker to be sent. */
enum art_decide_verdict art_decide_raw(struct art_decide *, const jv *line,
	    const char *raw, size_t rawlen, jv *out, bool *extra,
	    struct art_err *);

/*
 * The decision.response line (*out, the caller's) for resp (consumed), a
 * DecisionResponse, bare or with its type, answering the request line:
 * ART_DECIDE_ANSWER, or ART_DECIDE_FAIL with *out an error line and err
 * filled ("bad_response") when resp's type, session_id or decision_id
 * is not the request's.
 */
enum art_decide_verdict art_decide_complete(const jv *line, jv resp, jv *out,
	    struct art_err *);

/*
 * The lines a decider may answer, as an ndjson reader's filter
 * (art_ndjson_set_filter()): decision.request lines.  Any other
 * well-formed line comes back ART_NDJSON_RAW, to be passed on as it is
 * (a model request holds the whole prompt: parsing it only to pass it on
 * would cost a step O(path)).  A line passed on is the line that came
 * in, art_ndjson_raw()'s bytes, not libjq's re-serialisation of it
 * (which would turn 1.0 into 1 and 100000000000000000001 into 1e+20).
 */
int	art_decide_wants(const char *type, const char *trigger, void *ctx);

#endif
