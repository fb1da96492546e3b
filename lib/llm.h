/* llm.h - model calls: read off the bus, dispatched by provider, answered */
#ifndef ART_LLM_H
#define ART_LLM_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/*
 * A model call reaches agentrt-llm in one of two shapes: an llm.request
 * line (a call the engine runs) or a decision.request whose trigger is
 * llm.execute (a call a worker runs).  Both read into one struct
 * art_llm_call, a provider answers it with a struct art_llm_outcome, and
 * only the lines that carry the answer back differ: llm.result/llm.error
 * for the first, a decision.response holding an llm.result/llm.error
 * action for the second.
 *
 * The model is "provider/name".  A provider is a table of functions
 * (struct art_llm_provider) found by the part before the first '/', or by
 * the "format" of the agent's provider block of that name; adding one is
 * a module and a line in providers.c's table.  A provider answers at once
 * (answer: the mock) or later (start: HTTP), when the caller's poll loop
 * says its sockets are ready; the dispatcher hands every line back through
 * one callback either way.
 *
 * A call may name fallback models: when the model fails, the next is
 * asked at once, and the result's "model" says which one answered; the
 * provider's own name for it, when it gives another, is "served_model",
 * and the call is priced by that under the same prefix when the price
 * table knows it, else by "model".  A call a provider cannot make (-1
 * from answer or start) whose err code says the setup forbids it
 * ("bad_model", "no_api_key", "no_script") is an llm.error with detail
 * {"config": code}.  With
 * a cassette to replay, no provider is asked at all; with one to record,
 * every settled exchange is appended to it.
 *
 * A request may carry agentrt's "response_format": {"name", "description"?,
 * "schema"}, asking for one JSON object meeting the schema.  Every
 * provider answers it the same way, whatever its own mechanism (OpenAI's
 * json_schema, Anthropic's forced tool, the mock's JSON echo): the
 * response's "content" is the object's JSON text, with no tool call for
 * it.
 */

enum art_llm_kind {
	ART_LLM_NONE,		/* not a model call: pass it on */
	ART_LLM_REQUEST,	/* an llm.request line */
	ART_LLM_EXECUTE		/* a decision.request for llm.execute */
};

/* One call.  Embedded; art_llm_call_init() fills it, _release empties it. */
struct art_llm_call {
	enum art_llm_kind	 kind;
	jv			 line;	/* the input line, whole */
	/* Strings borrowed from line, valid until _release. */
	const char		*session_id;	/* NULL if none */
	const char		*decision_id;	/* ART_LLM_EXECUTE only */
	const char		*id;		/* the call's id */
	const char		*format;	/* NULL: neutral */
	int64_t			 attempt;	/* from 1; default 1 */
	bool			 stream;
	int64_t			 deadline_ms;	/* epoch ms; -1: none */
	jv			 request;	/* the LlmRequest */
	jv			 mock;		/* mock settings, or null */
	jv			 providers;	/* provider blocks, or null */
	jv			 fallback;	/* models after the first, or null */
};

/*
 * What a provider answers.  Exactly one of response (the LlmResponse) and
 * error ({error, retryable, code?, retry_after_ms?}) is set, the other
 * jv_null().  deltas are StreamDelta objects, sent before the settle when
 * the call streams; delay_ms holds the whole answer back.  Embedded;
 * _init, then _release.
 */
struct art_llm_outcome {
	jv	 deltas;
	jv	 response;
	jv	 error;
	int64_t	 delay_ms;
};

/*
 * Settings made once by the command and handed to every provider.
 * mock_script, when not null, overrides every mock script; it is
 * borrowed for the art_llm's life.
 */
struct art_clock;
struct art_prices;
struct art_cassette;

struct art_llm_opts {
	const char	*model;		/* for all calls; NULL: the request's */
	jv		 mock_script;
	/* The environment: getenv(3), or NULL for an empty one. */
	const char	*(*env)(const char *name);
	/* The clock calls are timed by (borrowed); NULL: the real one. */
	const struct art_clock	*clock;
	struct art_prices	*prices;	/* NULL: no costs */
	struct art_cassette	*replay;	/* answers every call */
	int		 record_fd;	/* appended to; -1: none */
	/*
	 * Process-wide setup a provider over the network needs
	 * (curl_global_init), called when the first such provider opens, so
	 * a ring of mock calls never pays for it; 0 or -1 with err.  NULL:
	 * none needed.
	 */
	int		 (*net_init)(struct art_err *);
};

/* A call in flight, as a provider that answers later sees it. */
struct art_llm_job;

struct art_llm_provider {
	const char	*name;		/* the model's prefix: "mock" */
	/*
	 * The provider's state, made when a call first names it.  NULL with
	 * err filled on failure; the calls naming it then fail with err's
	 * message.  May be NULL for a provider that keeps no state.
	 */
	void		*(*open)(const struct art_llm_opts *, struct art_err *);
	void		 (*close)(void *);
	/*
	 * Answers call for model (the whole "provider/name", after any
	 * override) into out, which the caller has _init'ed.  Errors the
	 * model itself gives (a rate limit, a refusal) are outcomes; -1 with
	 * err is for calls the provider cannot make at all, which the
	 * dispatcher answers as non-retryable llm.error with err's message.
	 */
	int		 (*answer)(void *, const struct art_llm_call *,
			    const char *model, struct art_llm_outcome *,
			    struct art_err *);
	/*
	 * Instead of answer: starts the call for model and returns; later,
	 * from work, sends each StreamDelta with art_llm_job_delta() and
	 * ends with art_llm_job_done().  -1 with err as for answer (the
	 * job is then not done).  The three below are the provider's part
	 * of the caller's poll loop, as art_llm_pollfds() and the rest.
	 */
	int		 (*start)(void *, struct art_llm_job *,
			    const char *model, struct art_err *);
	size_t		 (*pollfds)(void *, struct pollfd *, size_t max);
	int		 (*timeout)(void *);
	void		 (*work)(void *, const struct pollfd *, size_t n);
};

/* The call a job answers, borrowed for the job's life. */
const struct art_llm_call *art_llm_job_call(const struct art_llm_job *);
/* Sends delta (consumed) now when the call streams, and keeps it. */
void	art_llm_job_delta(struct art_llm_job *, jv delta);
/*
 * Ends the job with out (its contents are taken; out is left empty): the
 * next fallback model is asked, or the call is answered.  The job is gone
 * after.
 */
void	art_llm_job_done(struct art_llm_job *, struct art_llm_outcome *out);

/* Whether line (borrowed) is a model call, and which kind. */
enum art_llm_kind art_llm_kind_of(const jv *line);

/*
 * The messages of the last llm.request parsed, kept so that the next,
 * which repeats them and adds a few, is parsed for what it adds: a model
 * request holds the whole conversation, and parsing all of it at every
 * step would make a step cost the conversation's length.  Zero it to
 * start; art_llm_reuse_free() empties it.
 */
struct art_llm_reuse {
	char	*text;		/* the last request's messages array, as text */
	size_t	 len;
	jv	 messages;	/* the same, parsed (valid when text is set) */
};
void	art_llm_reuse_free(struct art_llm_reuse *);
/*
 * The llm.request line text[0..n) (a well-formed JSON object, as the
 * ndjson reader has checked it) parsed: the same value art_json_parse()
 * gives, built from the kept messages when the line's request.messages
 * begins with them.  jv_invalid() with err when it does not parse.
 */
jv	art_llm_parse_request(struct art_llm_reuse *, const char *text,
	    size_t n, struct art_err *);

/*
 * Reads the call in line (borrowed; the call keeps a copy).  Returns 0, or
 * -1 with err code "bad_request" and a message naming what is wrong
 * ("llm.request: missing field 'id'"); call then holds nothing to release.
 * A line that is no call at all is a bad_request too.
 */
int	art_llm_call_init(struct art_llm_call *, const jv *line,
	    struct art_err *);
void	art_llm_call_release(struct art_llm_call *);

void	art_llm_outcome_init(struct art_llm_outcome *);
void	art_llm_outcome_release(struct art_llm_outcome *);
/*
 * Makes out an error: message, retryable, and code when not NULL.  Drops
 * any response and deltas out held.
 */
void	art_llm_outcome_fail(struct art_llm_outcome *, const char *message,
	    bool retryable, const char *code);

struct art_llm;

/*
 * Where answers go: lines (an array, consumed) to send delay_ms from now
 * (a mock's delay) or at once (0), in the order given.
 */
typedef void art_llm_emit_fn(void *ctx, jv lines, int64_t delay_ms);

/*
 * A dispatcher; opts is copied, what it points to borrowed.  NULL when out
 * of memory.
 */
struct art_llm *art_llm_new(const struct art_llm_opts *, art_llm_emit_fn *,
	    void *ctx);
/* Drops the calls in flight unanswered. */
void	art_llm_free(struct art_llm *);

/*
 * 0 when model is "provider/name" with a provider agentrt has; else -1
 * with err "bad_model" saying why, as art_llm_answer() would.
 */
int	art_llm_check_model(const char *model, struct art_err *);

/*
 * Takes call (its contents move to the dispatcher; call is left empty)
 * and answers it through the emit callback, before returning or from a
 * later art_llm_work().  Never fails: a model with no provider, an
 * unknown provider ("unknown provider 'x' in model 'x/y'"), or a
 * provider's failure is a non-retryable llm.error.
 */
void	art_llm_submit(struct art_llm *, struct art_llm_call *);

/* Calls started and not yet answered. */
size_t	art_llm_active(const struct art_llm *);
/*
 * The caller's poll loop: the sockets to wait on (fills up to max, returns
 * how many there are), how long to wait at most (ms; -1 forever), and
 * what to do after the wait (pfd as filled, with revents).
 */
size_t	art_llm_pollfds(struct art_llm *, struct pollfd *, size_t max);
int	art_llm_timeout(const struct art_llm *);
void	art_llm_work(struct art_llm *, const struct pollfd *pfd, size_t n);

/*
 * The lines that carry out back for call, in order: an llm.token.delta per
 * delta when the call streams and succeeded, then the settle (llm.result or
 * llm.error, or for ART_LLM_EXECUTE a decision.response holding one as its
 * action).  Borrows both; returns a new array.
 */
jv	art_llm_lines(const struct art_llm_call *,
	    const struct art_llm_outcome *);

#endif
