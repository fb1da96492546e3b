/* engine-int.h - what the engine's files share: a step, and its helpers
 *
 * The engine is one concept, every step a struct cx in one write
 * transaction, kept in files by what the step does:
 *	engine.c		the public side: the engine, the sessions it
 *				drives, claim and recovery, the entry points
 *	engine-step.c		a step's helpers, a step within a step, and
 *				the transaction a step runs in
 *	engine-events.c		recording an event, and what clients see of it
 *	engine-queue.c		the decision queue, the live decision, and the
 *				requests that go out (decisions, model calls)
 *	engine-calls.c		calls: dispatch, settle, void, timers, planning
 *	engine-held.c		calls held for a person: approval and ask_user
 *	engine-sub.c		sub-agents: a child session opened, finished,
 *				cancelled
 *	engine-actions.c	a decision's actions, and applying its response
 *	engine-turns.c		inputs, and a turn: begun, ended, what it waits
 *				on
 *	engine-guard.c		what governs a turn: limits, the tools it may
 *				run
 *	engine-scan.c		the security pipeline on what is recorded
 *	engine-mcp.c		an agent's MCP servers: their tools asked
 *				for, recorded, layered into its config
 *	engine-auto.c		autonomous mode: the plan, its steps and
 *				its verdicts; structured answers' requests
 *	engine-serve.c		a long-lived engine: a line's session
 *				placed, orphans, idle sessions let go
 *
 * Naming: a function one engine file defines and another calls is
 * eng_<what> (eng_rec, eng_summary), declared below under the file that
 * defines it; what only one file uses stays static there, unprefixed.
 * The three jv builders every line uses (obj, set, set_some) are static
 * inline here.  Only lib/engine*.c include this header; nothing in it is
 * part of the engine's contract, which is engine.h.  Each function's
 * comment is at its definition.  A struct cx lives for one step, inside
 * the transaction it was made for; an engine is used by one thread.
 */
#ifndef ART_ENGINE_INT_H
#define ART_ENGINE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "engine.h"
#include "json.h"
#include "propose.h"
#include "retry.h"

#define DECISION_ATTEMPTS	10
#define SUB_AGENT_DEPTH		5	/* max_subagent_depth's default */
#define ENG_SEC_CACHE		8	/* compiled security configs kept */

struct art_engine {
	struct art_engine_opts	 o;
	/*
	 * The sessions driven, nsids of them, each with its next timer, in
	 * arrays with room for cap and wcap (art_grow), at least one more
	 * than nsids: the slot a session being started takes.  They grow
	 * as sessions are adopted (drive() in engine.c), and sids may move
	 * then, so what outlives a step holds an index into it, not a
	 * pointer.
	 */
	char			(*sids)[ART_ID_MAX + 1];
	int64_t			*wakes;
	int			 nsids;
	size_t			 cap, wcap;
	jv			 out;		/* lines for the ring */
	jv			 events;	/* events for clients */
	int64_t			 wake;		/* the earliest of wakes[] */
	jv			 first_token;	/* call id -> ms, for ttft */
	jv			 token_index;	/* call id -> its next token's */
	/*
	 * sid -> {head, depth, text}: the messages of the path root..head
	 * as JSON text, joined by commas, as the last model call of sid
	 * sent them.  The next call's prompt is that text and the few
	 * messages since, so building it costs the news, not the path.
	 * Only what a committed step made is kept (prompt_stage until then).
	 */
	jv			 prompts;
	jv			 prompt_stage;
	/*
	 * The security pipeline (engine-scan.c): the last few agents',
	 * compiled, each with the key it was compiled for and when it was
	 * last used; call id -> what its token stream holds back, kept and
	 * staged as the prompts are.
	 */
	struct art_security	*sec[ENG_SEC_CACHE];
	jv			 sec_key[ENG_SEC_CACHE];
	uint64_t		 sec_used[ENG_SEC_CACHE], sec_clock;
	jv			 streams;
	jv			 stream_stage;
	/*
	 * The last config a step resolved, its version and its LlmTools,
	 * worked out once: the store gives the same parsed jv for the same
	 * bytes, so a step whose config is that jv (jv_identical) reuses
	 * them.  jv_null() until then.
	 */
	jv			 cfg_last;
	jv			 cfg_tools;
	char			 cfg_version[ART_CONFIG_VERSION_LEN + 1];
};

/* One step's work inside one transaction. */
struct cx {
	struct art_engine	*e;
	struct art_txn		*t;
	struct art_err		*err;
	const char		*sid;
	int64_t			 now;
	jv			 out;
	jv			 events;
	int64_t			 wake;
	jv			 sum;		/* the summary, until the next rec */
	jv			 adopt;		/* sessions to drive from now on */
	const struct cx		*up;		/* the step this one runs within */
	/* A limit that stopped the response being applied (engine-guard.c). */
	const char		*stop_code;
	char			 stop_why[256];
};

/* One step as one transaction (or one line's part of a batch's). */
struct op {
	struct art_engine	*e;
	const char		*sid;
	int			(*fn)(struct cx *, void *);
	void			*arg;
	const jv		*line;
	jv			 out, events, adopt;
	int64_t			 wake;
	int			 quiet;		/* no plan: nothing goes out */
	int			 sync;		/* durable whatever it emits */
};

/* A call's settle: from a line, an action, or the engine itself. */
struct settle {
	const char	*id;
	int64_t		 attempt;	/* 0: whatever attempt is current */
	int		 ok;
	jv		 value;		/* result, response, or error text */
	int		 retryable;
	jv		 code;
	int64_t		 retry_after_ms;
	int		 internal;	/* the engine's own: drop stale quietly */
	jv		 detail;	/* an error's detail, or null */
};

struct queue_scan {
	jv	first;		/* the first entry the filter takes */
	jv	all;		/* every entry, when wanted */
	int	parked;		/* take only what passes an interrupt */
};

/* A child's turn ended: what its parent's call folds in. */
struct child_done {
	const char	*child;
	jv		 data, error, usage, cost;
};

static inline jv
obj(const char *type)
{
	return jv_object_set(jv_object(), jv_string("type"), jv_string(type));
}

/* Short names for json.h's, as the engine builds objects on every line. */
static inline jv
set(jv o, const char *key, jv v)
{
	return art_json_set(o, key, v);
}

static inline jv
set_some(jv o, const char *key, jv v)
{
	return art_json_set_some(o, key, v);
}

/* engine.c */
int	eng_claim(struct cx *);

/* engine-step.c: small things */
int	eng_with_session(struct cx *, const char *sid,
	    int (*fn)(struct cx *, void *), void *arg);
void	eng_adopt(struct cx *, const char *sid);
jv	eng_iso(int64_t ms);
int64_t	eng_ms_of(const jv *o, const char *key);
int	eng_mint(struct cx *, char *buf);
int	eng_reject(struct cx *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	eng_wake_at(struct cx *, int64_t ms);
void	eng_wake(struct cx *, const jv *o, const char *key);
void	eng_emit(struct cx *, jv line);
/* engine-step.c: reading the session */
jv	eng_get(struct cx *, enum art_db, const char *sid, const char *key);
jv	eng_summary(struct cx *);
int	eng_head(struct cx *, char *buf, size_t n);
jv	eng_head_jv(const char *h);
jv	eng_config_at(struct cx *, const char *h);
const char *eng_config_version(struct cx *, const jv *config, jv *tools);
jv	eng_get_call(struct cx *, const char *id);
jv	eng_open_calls(struct cx *, const jv *s);
/* engine-step.c: transactions */
int	eng_op_txn(struct art_txn *, void *op, struct art_err *);
void	eng_prompts_unstage(struct art_engine *);
void	eng_prompts_keep(struct art_engine *);
int	eng_op_has_effect(const struct op *);
int	eng_op_write(struct art_txn *, void *op, struct art_err *);
int	eng_reject_step(struct cx *, void *why);

/* engine-events.c */
void	eng_publish(struct cx *, const jv *ev, jv ce);
jv	eng_turn_record(struct cx *, const char *tid);
int	eng_project_completion(struct cx *, const jv *ev, const jv *p);
int	eng_rec(struct cx *, jv payload);

/* engine-guard.c */
int	eng_guard_call(struct cx *, const jv *cfg, int llm);
int	eng_guard_stopped(struct cx *);
int	eng_guard_clock(struct cx *, const jv *s);
int	eng_guard_execute(struct cx *, const jv *live, const jv *cfg);
jv	eng_guard_result(const jv *cfg, jv text);
/* parts (a ContentPart[], consumed) held to the same cap (parts.h). */
jv	eng_guard_parts(const jv *cfg, jv parts);
int	eng_guard_blocks(const jv *cfg);
int	eng_guard_schema(struct cx *, const jv *cfg, const char *name,
	    const char *which, const char *why);

/* engine-scan.c */
enum art_sec_scope;
struct art_security;
void	eng_scan_free(struct art_engine *);
int	eng_scan_sec(struct cx *, const jv *cfg,
	    const struct art_security **);
int	eng_scan_sec_at(struct cx *, const struct art_security **);
jv	eng_scan(struct cx *, const struct art_security *, enum art_sec_scope,
	    jv value, const char *where, const char **block);
jv	eng_scan_refusal(const char *id, const char *what);
jv	eng_scan_input(struct cx *, jv in, const char **block);
jv	eng_scan_quiet(struct cx *, jv text);
jv	eng_scan_reply(struct cx *, const struct art_security *, jv resp,
	    const char **block);
jv	eng_scan_delta(struct cx *, const char *id, jv delta);
jv	eng_scan_delta_end(struct cx *, const char *id);
void	eng_scan_keep(struct art_engine *);
void	eng_scan_unstage(struct art_engine *);

/* engine-queue.c */
int	eng_scan_queue(struct cx *, struct queue_scan *);
jv	eng_queued(struct cx *);
int	eng_queue_decision(struct cx *, jv trigger, int priority, jv extra);
jv	eng_step_up(struct cx *, char *at);
int	eng_redeliver(struct cx *, const jv *live);
jv	eng_parking(struct cx *, const jv *s);
int	eng_is_parked(struct cx *, const jv *s);
int	eng_dispatch_decision(struct cx *, const jv *s);
jv	eng_llm_line_text(struct cx *, jv head, const jv *req, jv tail);

/* engine-calls.c */
enum art_call_kind eng_kind_of(const jv *call);
jv	eng_call_event(const jv *call, const char *step);
jv	eng_call_request(struct cx *, const jv *call);
jv	eng_as_text(jv v);
int	eng_call_failed(struct cx *, const jv *call, const struct settle *,
	    jv finished);
jv	eng_finished_for(const jv *call);
int	eng_tool_done(struct cx *, const jv *call, const jv *value);
int	eng_tool_done_sc(struct cx *, const jv *call, const jv *value,
	    const jv *structured);
int	eng_read_settle(const jv *src, const char *type, struct settle *,
	    struct art_err *);
void	eng_settle_release(struct settle *);
int	eng_settle(struct cx *, struct settle *, const char *type,
	    const jv *line);
int	eng_fail_call(struct cx *, const jv *call, const char *why,
	    const char *code);
int	eng_void_call(struct cx *, const jv *call);
int	eng_execute_again(struct cx *, const jv *call);
int	eng_plan(struct cx *);

/* engine-held.c */
int	eng_refuse_call(struct cx *, const jv *call, jv why);
int	eng_hold_call(struct cx *, const jv *call);
int	eng_answer_hold(struct cx *, const jv *it, const jv *payload,
	    const char *iid, int apply, char *why, size_t n);

/* engine-sub.c */
int64_t	eng_driver_of(struct cx *, const char *sid);
int64_t	eng_other_driver(struct cx *);
const char *eng_parent_of(const jv *s);
int	eng_open_child(struct cx *, const jv *call);
int	eng_child_done_step(struct cx *, void *done);
int	eng_cancel_step(struct cx *, void *why);

/* engine-mcp.c */
int	eng_mcp_ready(struct cx *, const jv *s, const jv *d, jv *file);
int	eng_mcp_listed(struct cx *, const jv *line);

/* engine-auto.c */
jv	eng_auto_request(struct cx *, const jv *cfg, const char *h, jv req);
jv	eng_auto_builtin(const jv *cfg, const char *name);
int	eng_auto_done(struct cx *, const jv *call);
int	eng_auto_step(struct cx *, const jv *live, const jv *cfg,
	    const char *h, jv *actions);
jv	eng_auto_reason(struct cx *, const char *tid);

/* engine-actions.c */
int	eng_deliver(struct cx *, void *message);
int	eng_in_ids(const jv *ids, const char *id);
int	eng_drop_for_call(struct cx *, const char *id);
int	eng_void_stranded(struct cx *, const char *old, int steps);
jv	eng_normalized(struct cx *, jv view, const char *h);
int	eng_apply_response(struct cx *, const jv *live, const jv *r);

/* engine-turns.c */
int	eng_rec_error(struct cx *, const char *code, const char *message,
	    const jv *line);
int	eng_waits_outside(struct cx *);
int	eng_input_message(struct cx *, const jv *line, const char *type);
int	eng_dispatch_input(struct cx *, const jv *line);
int	eng_end_turn(struct cx *, jv data, jv error);
int	eng_fail_run(struct cx *, const char *why);
int	eng_stop_turn(struct cx *, const char *code, jv data, const char *why);
enum art_engine_state eng_session_state(struct cx *, int depth);

#endif
