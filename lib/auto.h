/* auto.h - autonomous mode: a goal, its todo plan, and when to stop
 *
 * An agent with "execution_mode": "autonomous" treats a turn's user
 * message as a goal (seeds/002, EXECUTION_MODE_AUTONOMOUS): the first
 * step asks the model to decompose it into todos, each later step pursues
 * the active todo with the usual tool loop, and the model marks a todo
 * done with the built-in todo_done tool, which is confirmed against the
 * plan.  After each step a step_progress record says what the step did;
 * from those the plan's verdict is taken: all todos done is
 * "completed", no progress over the stall window "stalled", the step
 * budget spent "max_steps".  The engine applies the verdict; the model
 * never decides termination.
 *
 * A plan is one JSON object, recorded in the session as plan.updated and
 * resolved along the active path (so a fork back past it forgets it):
 *
 *	{"goal": "...", "status": "planning"|"running"|"completed"|
 *	 "stalled"|"max_steps",
 *	 "todos": [{"id": "todo-1", "title": "...",
 *		    "status": "pending"|"active"|"done"}],
 *	 "active": "todo-1" | null, "step": 0,
 *	 "window": [step_progress, ...], "seen": ["hex", ...]}
 *
 * window holds the last stall_window step_progress records, seen the
 * hashes of the last 64 artifacts (successful tool results and replies)
 * the plan has produced.  This module is pure: no store, no I/O.
 */
#ifndef ART_AUTO_H
#define ART_AUTO_H

#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

#define ART_AUTO_PLAN_GOAL	"decompose goal into todo plan"
#define ART_AUTO_PLAN_FORMAT	"todo_plan"	/* its response_format */
#define ART_AUTO_DONE_TOOL	"todo_done"
#define ART_AUTO_SEEN_MAX	64

/* An agent's "autonomous" settings, defaults filled in. */
struct art_auto {
	int64_t		 max_todos;	/* 12 */
	int64_t		 stall_window;	/* 3 */
	int64_t		 max_steps;	/* 40: steps after the plan */
	int		 park_on_stall;	/* "on_stall": "park" (default "end") */
};

/* Is config (borrowed) an autonomous agent's ("execution_mode")? */
int	art_auto_is(const jv *config);
/* config's "autonomous" settings, with the defaults for what is absent. */
void	art_auto_settings(const jv *config, struct art_auto *);
/*
 * Checks an agent config's execution_mode ("chat" or "autonomous"),
 * autonomous (an object: max_todos 1..100, stall_window 1..100,
 * max_steps 1..10000, on_stall "end" or "park", nothing else) and
 * answer ("text" or "structured"): 0, or -1 with err code "bad_agent"
 * naming the member and why ("autonomous.max_todos: expected an
 * integer from 1 to 100, got 0").
 */
int	art_auto_check(const jv *config, struct art_err *);

/*
 * The planning call's response_format: {"name": ART_AUTO_PLAN_FORMAT,
 * "description", "schema"}, the schema a DecompositionEvent's todos:
 * {"todos": [{"title", "id"?, "ordering"?, "acceptance"?}]}.
 */
jv	art_auto_plan_format(void);
/* The system text that asks for a plan of goal, at most s's max_todos. */
jv	art_auto_plan_prompt(const char *goal, const struct art_auto *s);
/*
 * A new plan for goal from the planning reply's text (borrowed; NULL or
 * not a plan: no todos).  The reply's todos are stable-sorted by
 * ordering (those without one keep their place after those with one),
 * those with an empty or missing title dropped, re-numbered todo-1...,
 * and clamped to max_todos; none left is one todo, the goal itself.  The
 * first is active; status "running", step 0.  *dropped, when not NULL,
 * receives how many todos the clamp and the empty titles dropped.
 */
jv	art_auto_plan_new(const char *goal, const char *reply,
	    const struct art_auto *s, int64_t *dropped);
/*
 * The DecompositionEvent of plan (borrowed): {"goal", "todos": [{"id",
 * "title", "ordering"}]} (ordering 0-based).
 */
jv	art_auto_decomposition(const jv *plan);

/* The active todo of plan (borrowed), or jv_null(). */
jv	art_auto_active(const jv *plan);
/*
 * The system text for a step of plan (borrowed): the goal, the todos
 * with their statuses, the active one (the step's step_goal) and how to
 * say it is done (call todo_done).  A new string jv.
 */
jv	art_auto_step_prompt(const jv *plan);
/* The built-in todo_done tool, as an AgentTool ({name, description,
 * input}: {"id"?: string, "summary"?: string}). */
jv	art_auto_done_tool(void);
/*
 * Marks todo id (NULL or "": the active one) done, confirmed against the
 * plan: only the active todo of a running plan can be.  0 and *plan
 * (replaced) with it done and the next pending todo active (null when
 * none is left); -1 with why ("todo-3 is not the active todo (todo-2
 * is)", "no todo 'x'", "the plan is not running") and *plan unchanged.
 */
int	art_auto_mark_done(jv *plan, const char *id, char *why, size_t n);

/* What one step did, for its step_progress record. */
struct art_auto_step {
	const char	*text;		/* the model's reply text, or NULL */
	const jv	*tool_calls;	/* its tool_calls (the message's), or
					 * NULL */
	const jv	*results;	/* the successful results' texts, an
					 * array of strings, or NULL */
	int64_t		 errored;	/* tool calls that failed */
	int		 marked;	/* the model called todo_done */
	int		 confirmed;	/* and the plan took it */
};

/*
 * The step_progress record of a step of plan (both borrowed):
 * {"step", "todo", "made_tool_calls", "tool_calls_errored",
 *  "produced_new_artifacts", "todo_marked_complete_by_model",
 *  "todo_completed", "response_delta_hash"}.  step is the plan's step + 1
 * (steps count from 1); todo the active todo's id, or, when the step's
 * todo_done was confirmed (art_auto_mark_done() already ran), the todo it
 * finished (the last done).  An artifact is a successful
 * result or a non-empty reply text whose SHA-256 is not in plan's seen;
 * response_delta_hash is the hex SHA-256 of the reply text and the tool
 * calls' names and arguments, so a step that says and does the same as
 * one before hashes the same.  The record also holds "artifacts", the
 * new hashes, which art_auto_after_step() takes out.
 */
jv	art_auto_progress(const jv *plan, const struct art_auto_step *st);
/*
 * Folds a step's progress (*progress, "artifacts" removed from it) into
 * plan (consumed): step + 1, the window (the last stall_window records),
 * seen (the last ART_AUTO_SEEN_MAX hashes).  Sets the plan's status and
 * *verdict (static text) to, first that holds: "completed" every todo is
 * done; "stalled" the window is full and none of its steps produced a
 * new artifact or completed a todo, and its response_delta_hashes repeat
 * (fewer distinct than steps; a window of one repeats when its hash is
 * the step before's); "max_steps" step reached max_steps;
 * "continue" (status "running").  Returns the new plan.
 */
jv	art_auto_after_step(jv plan, jv *progress, const struct art_auto *s,
	    const char **verdict);
/*
 * Resumes a stalled plan (consumed) for another window: status
 * "running", the window emptied.  A plan not stalled is returned as is.
 */
jv	art_auto_resume(jv plan);

#endif
