/* portable.h - a session as a file: export, import, checkpoint, restore */
#ifndef ART_PORTABLE_H
#define ART_PORTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * An export is NDJSON: a header line
 *
 *	{"type":"agentrt.export","version":1,"session":ROOT,
 *	 "sessions":[ROOT,CHILD...],"loop_iteration":N}
 *
 * then every event of each session listed, as agentrt-session log prints
 * them ({session_id, seq, occurred_at, turn_id?, payload}), a session's
 * events together and in seq order, each parent before the sub-agents it
 * spawned, in the order it spawned them (depth first).  The
 * log is the truth, so the events are all an importer needs: it appends
 * them as they are and folds them into the views.  loop_iteration is the
 * number of model calls the root session has completed.
 *
 * A checkpoint is the same lines, each with its keys sorted, after a
 * 4-byte big-endian schema version: the same sessions give the same
 * bytes, and nothing of the moment of checkpointing is inside.
 */
#define ART_EXPORT_VERSION	1
#define ART_CHECKPOINT_VERSION	1

/*
 * The export of sid, and with children of every sub-agent session below
 * it, as an array of lines; jv_invalid() with err ("not_found"
 * for no such session).
 */
jv	art_export(struct art_txn *, const char *sid, bool children,
	    struct art_err *);

/*
 * Checks an export's lines (borrowed; lines[i] is line i + 1 of the file,
 * each parsed JSON; the reader refuses what is not): the
 * header's type and version, every event well-formed and of a session the
 * header lists, each session's seq running 1..n without a gap and
 * starting with session.created.  -1 with err code "bad_export" and a
 * message starting "line N: ".
 */
int	art_import_check(const jv *lines, struct art_err *);

/*
 * Checked lines (borrowed) renamed: as (NULL: keep the ids) becomes the
 * root's id, and each other session's the UUIDv5 of "AS:OLD_ID" in
 * agentrt's namespace; every string in the lines (header included) that
 * is one of the old ids becomes the new one.  A new array.
 */
jv	art_import_renamed(const jv *lines, const char *as);

/*
 * Recreates the sessions of checked lines (borrowed) in t: each event
 * appended as it is and folded into the views.  *ids, when ids is not
 * NULL, is set to the ids written, root first.  err code "exists" when an
 * id is taken (nothing is written: the caller aborts t).
 */
int	art_import(struct art_txn *, const jv *lines, jv *ids,
	    struct art_err *);

/*
 * The checkpoint of export lines (borrowed), in a malloc'd buffer (*len
 * bytes).  NULL with err "nomem".
 */
unsigned char *art_checkpoint_blob(const jv *lines, size_t *len,
	    struct art_err *);

/*
 * sid's checkpoint, children included, in a malloc'd buffer (*len bytes).
 * NULL with err.
 */
unsigned char *art_checkpoint(struct art_txn *, const char *sid,
	    size_t *len, struct art_err *);

/*
 * The export lines of a checkpoint blob, for art_import_check(); err code
 * "bad_checkpoint" for a blob shorter than its prefix, "bad_json" for a
 * line that is not JSON (the message names it), "version" for a schema
 * version this build does not read (the message says both).
 */
jv	art_checkpoint_lines(const unsigned char *blob, size_t len,
	    struct art_err *);

#endif
