/* session-port.c - agentrt-session export, import, checkpoint, restore */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jv.h>

#include "buf.h"
#include "diag.h"
#include "err.h"
#include "json.h"
#include "ndjson.h"
#include "portable.h"
#include "session.h"
#include "sha.h"

#include "session-cmd.h"

/* The whole of path ("-" or NULL: stdin), malloc'd; NULL said. */
static unsigned char *
slurp(const char *path, size_t *len)
{
	bool in = path == NULL || strcmp(path, "-") == 0;
	int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	struct art_buf b = ART_BUF_INIT;
	struct art_err err;
	char *text;
	int rc;

	if (fd == -1) {
		art_warn("read '%s': %s", path, strerror(errno));
		return NULL;
	}
	rc = art_buf_read_fd(&b, fd, 0, in ? "-" : path, &err);
	if (rc == -1 && art_err_is(&err, "nomem"))
		art_die(ART_EXIT_FAIL, "out of memory");
	if (rc == -1)
		art_warn("read '%s': %s", in ? "-" : path, strerror(errno));
	if (!in)
		close(fd);
	if (rc == -1) {
		art_buf_release(&b);
		return NULL;
	}
	if ((text = art_buf_detach(&b, len)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	return (unsigned char *)text;
}

/*
 * The lines of an export file, each parsed; a line that is not JSON (a
 * blank one included) is refused with its number.  jv_invalid() said.
 */
static jv
export_lines(const char *name, const unsigned char *text, size_t len,
    const char *outcome)
{
	jv lines = jv_array(), l;
	struct art_err err;
	size_t at = 0, end;
	int line = 1;
	char *s;

	while (at < len) {
		for (end = at; end < len && text[end] != '\n'; end++)
			;
		if ((s = strndup((const char *)text + at, end - at)) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		l = art_json_parse(s, end - at, &err);
		free(s);
		if (!jv_is_valid(l)) {
			jv_free(l);
			jv_free(lines);
			art_warn("%s: line %d: %s; %s", name, line,
			    err.msg, outcome);
			return jv_invalid();
		}
		lines = jv_array_append(lines, l);
		at = end + 1;
		line++;
	}
	return lines;
}

jv
session_read_export(const char *path, const char *outcome)
{
	const char *name = path != NULL && strcmp(path, "-") != 0 ? path :
	    "<stdin>";
	struct art_err err;
	unsigned char *text;
	size_t len;
	jv lines;

	if ((text = slurp(path, &len)) == NULL)
		return jv_invalid();
	lines = export_lines(name, text, len, outcome);
	free(text);
	if (!jv_is_valid(lines))
		return lines;
	if (art_import_check(&lines, &err) == -1) {
		jv_free(lines);
		art_warn("%s: %s; %s", name, err.msg, outcome);
		return jv_invalid();
	}
	return lines;
}

/* --- export ------------------------------------------------------------ */

struct export_ctx {
	const char	*sid;
	bool		 children;
	jv		 lines;
};

static int
export_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct export_ctx *c = ctx;

	c->lines = art_export(t, c->sid, c->children, err);
	return jv_is_valid(c->lines) ? 0 : -1;
}

int
session_export(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct export_ctx c = { argv[0], o->children, jv_invalid() };
	struct art_err err;
	int status = ART_EXIT_OK;

	(void)argc;
	if (art_store_read(e->store, export_fn, &c, &err) == -1)
		return session_failed(&err);
	jv_array_foreach(c.lines, i, l) {
		if (status == ART_EXIT_OK && art_ndjson_write(stdout, l,
		    &err) == -1)
			status = session_failed(&err);
		else if (status != ART_EXIT_OK)
			jv_free(l);
	}
	jv_free(c.lines);
	return status;
}

/* --- import ------------------------------------------------------------ */

struct import_ctx {
	const jv	*lines;
	jv		 ids;
	/* restore: the checkpoint wanted, and whether it was there already */
	const unsigned char *want;
	size_t		 want_len;
	bool		 already;
};

static int
import_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct import_ctx *c = ctx;

	return art_import(t, c->lines, &c->ids, err);
}

/* Prints the ids, root first. */
static int
print_ids(jv ids)
{
	int status = ART_EXIT_OK;

	jv_array_foreach(ids, i, id) {
		if (status == ART_EXIT_OK && printf("%s\n",
		    jv_string_value(id)) < 0)
			status = ART_EXIT_FAIL;
		jv_free(id);
	}
	jv_free(ids);
	return status;
}

int
session_import(struct env *e, const struct opts *o, int argc, char **argv)
{
	const char *path = argc > 0 ? argv[0] : NULL;
	struct import_ctx c = { .ids = jv_invalid() };
	struct art_err err;
	jv lines, renamed;

	if (!jv_is_valid(lines = session_read_export(path, "nothing "
	    "imported")))
		return ART_EXIT_FAIL;
	renamed = art_import_renamed(&lines, o->as);
	jv_free(lines);
	c.lines = &renamed;
	if (art_store_write(e->store, import_fn, &c, &err) == -1) {
		jv_free(renamed);
		return session_failed(&err);
	}
	jv_free(renamed);
	return print_ids(c.ids);
}

/* --- checkpoint -------------------------------------------------------- */

struct checkpoint_ctx {
	const char	*sid;
	unsigned char	*blob;
	size_t		 len;
};

static int
checkpoint_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct checkpoint_ctx *c = ctx;

	c->blob = art_checkpoint(t, c->sid, &c->len, err);
	return c->blob != NULL ? 0 : -1;
}

static void
hash_hex(const unsigned char *blob, size_t len, char hex[65])
{
	unsigned char d[ART_SHA256_LEN];

	art_sha256(blob, len, d);
	art_hex(d, sizeof(d), hex);
}

static int
write_all(int fd, const unsigned char *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		if ((r = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int
session_checkpoint(struct env *e, const struct opts *o, int argc,
    char **argv)
{
	struct checkpoint_ctx c = { argv[0], NULL, 0 };
	struct art_err err;
	char hex[65];
	int fd = STDOUT_FILENO, status = ART_EXIT_OK;

	(void)argc;
	/* Checked before the work: a blob is no use on a terminal. */
	if (o->output == NULL && !o->hash && isatty(STDOUT_FILENO))
		art_die(ART_EXIT_USAGE, "checkpoint: refusing to write a "
		    "binary checkpoint to a terminal: give -o FILE, or "
		    "--hash");
	if (art_store_read(e->store, checkpoint_fn, &c, &err) == -1)
		return session_failed(&err);
	if (o->output != NULL && (fd = open(o->output, O_WRONLY | O_CREAT |
	    O_TRUNC | O_CLOEXEC, 0600)) == -1) {
		art_warn("checkpoint: write '%s': %s", o->output,
		    strerror(errno));
		free(c.blob);
		return ART_EXIT_FAIL;
	}
	if (o->output != NULL || !o->hash) {
		fflush(stdout);
		if (write_all(fd, c.blob, c.len) == -1) {
			art_warn("checkpoint: write '%s': %s", o->output !=
			    NULL ? o->output : "-", strerror(errno));
			status = ART_EXIT_FAIL;
		}
	}
	if (fd != STDOUT_FILENO && close(fd) == -1 && status == ART_EXIT_OK) {
		art_warn("checkpoint: write '%s': %s", o->output,
		    strerror(errno));
		status = ART_EXIT_FAIL;
	}
	if (status == ART_EXIT_OK && o->hash) {
		hash_hex(c.blob, c.len, hex);
		printf("%s\n", hex);
	}
	free(c.blob);
	return status;
}

/* --- restore ----------------------------------------------------------- */

/*
 * Restoring what is already there is a no-op: the session's checkpoint
 * now is the same bytes.  Anything else under that id is a conflict.
 */
static int
restore_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct import_ctx *c = ctx;
	jv head = jv_array_get(jv_copy(*c->lines), 0), s;
	const char *root = art_json_str(&head, "session");
	unsigned char *have;
	size_t len;
	char a[65], b[65];
	int64_t loops = 0;
	int r = 0;

	s = art_session_get(t, root, NULL);
	if (!jv_is_valid(s)) {
		jv_free(s);
		jv_free(head);
		return art_import(t, c->lines, &c->ids, err);
	}
	jv_free(s);
	if ((have = art_checkpoint(t, root, &len, err)) == NULL) {
		jv_free(head);
		return -1;
	}
	if (len == c->want_len && memcmp(have, c->want, len) == 0) {
		c->already = true;
	} else {
		hash_hex(have, len, a);
		hash_hex(c->want, c->want_len, b);
		art_json_get_int(&head, "loop_iteration", 0, &loops, NULL);
		r = art_err_set(err, "conflict", "session '%s' exists and "
		    "differs from the checkpoint (loop iteration %lld, sha256 "
		    "%.12s..., against %.12s... here): restore --as NEW_ID",
		    root, (long long)loops, b, a);
	}
	free(have);
	jv_free(head);
	return r;
}

int
session_restore(struct env *e, const struct opts *o, int argc, char **argv)
{
	const char *path = argc > 0 ? argv[0] : NULL;
	const char *name = path != NULL && strcmp(path, "-") != 0 ? path :
	    "<stdin>";
	struct import_ctx c = { .ids = jv_invalid() };
	struct art_err err;
	unsigned char *blob, *want;
	size_t len;
	jv lines, renamed;
	int r;

	if ((blob = slurp(path, &len)) == NULL)
		return ART_EXIT_FAIL;
	lines = art_checkpoint_lines(blob, len, &err);
	free(blob);
	if (!jv_is_valid(lines)) {
		art_warn("%s: %s; nothing restored", name, err.msg);
		return ART_EXIT_FAIL;
	}
	if (art_import_check(&lines, &err) == -1) {
		jv_free(lines);
		art_warn("%s: bad checkpoint: %s; nothing restored", name,
		    err.msg);
		return ART_EXIT_FAIL;
	}
	renamed = art_import_renamed(&lines, o->as);
	jv_free(lines);
	if ((want = art_checkpoint_blob(&renamed, &c.want_len, &err)) ==
	    NULL) {
		jv_free(renamed);
		return session_failed(&err);
	}
	c.lines = &renamed;
	c.want = want;
	r = art_store_write(e->store, restore_fn, &c, &err);
	free(want);
	jv_free(renamed);
	if (r == -1)
		return session_failed(&err);
	if (c.already) {
		art_warn("restore: session already as checkpointed; nothing "
		    "to do");
		return ART_EXIT_OK;
	}
	return print_ids(c.ids);
}
