/* exchanges.c - recorded answers in an NDJSON file, played back by key */
#include "exchanges.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "ndjson.h"

struct exchange {
	char	 key[ART_EXCHANGE_KEY_LEN + 1];
	jv	 line;
	bool	 played;
};

struct art_exchanges {
	struct exchange	*x;
	size_t		 n, cap;
};

/* Keeps line (consumed) under key; -1 with err "nomem". */
static int
add(struct art_exchanges *e, jv line, const char *key, struct art_err *err)
{
	if (art_grow(&e->x, &e->cap, e->n + 1, sizeof(*e->x)) == -1) {
		jv_free(line);
		return art_err_set(err, "nomem", "out of memory");
	}
	memcpy(e->x[e->n].key, key, sizeof(e->x[e->n].key));
	e->x[e->n].line = line;
	e->x[e->n++].played = false;
	return 0;
}

/* Reads every line of rd into e; -1 with err (not yet prefixed). */
static int
read_all(struct art_exchanges *e, struct art_ndjson_reader *rd,
    art_exchange_check_fn *check, struct art_err *err)
{
	char key[ART_EXCHANGE_KEY_LEN + 1];
	enum art_ndjson_status s;
	jv line;

	while ((s = art_ndjson_next(rd, &line, err)) != ART_NDJSON_EOF) {
		if (s != ART_NDJSON_OK)
			return -1;
		if (check(&line, key, err) == -1) {
			jv_free(line);
			return -1;
		}
		if (add(e, line, key, err) == -1)
			return -1;
	}
	return 0;
}

struct art_exchanges *
art_exchanges_load(const char *path, const char *what, const char *code,
    art_exchange_check_fn *check, struct art_err *err)
{
	struct art_ndjson_reader *rd;
	struct art_exchanges *e;
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		art_err_set(err, code, "%s '%s': %s", what, path,
		    strerror(errno));
		return NULL;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL ||
	    (rd = art_ndjson_reader_new(fd, path, ART_NDJSON_MAX_LINE,
	    ART_NDJSON_REQUIRE_TYPE)) == NULL) {
		free(e);
		close(fd);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	if ((r = read_all(e, rd, check, err)) == -1 &&
	    !art_err_is(err, "nomem")) {
		art_err_prefix(err, "%s %s:%zu", what, path,
		    art_ndjson_lineno(rd));
		err->code = code;
	}
	art_ndjson_reader_free(rd);
	close(fd);
	if (r == -1) {
		art_exchanges_free(e);
		return NULL;
	}
	return e;
}

void
art_exchanges_free(struct art_exchanges *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->n; i++)
		jv_free(e->x[i].line);
	free(e->x);
	free(e);
}

size_t
art_exchanges_size(const struct art_exchanges *e)
{
	return e->n;
}

jv
art_exchanges_next(struct art_exchanges *e, const char *key)
{
	struct exchange *last = NULL;
	size_t i;

	for (i = 0; i < e->n; i++) {
		if (strcmp(e->x[i].key, key) != 0)
			continue;
		last = &e->x[i];
		if (!last->played) {
			last->played = true;
			return jv_copy(last->line);
		}
	}
	return last != NULL ? jv_copy(last->line) : jv_invalid();
}

int
art_exchanges_append(int fd, const jv *line, const char *what,
    struct art_err *err)
{
	size_t len;
	char *p = art_json_dump(line, &len);
	ssize_t n;

	if (p == NULL)
		return art_err_set(err, "nomem", "out of memory");
	p[len] = '\n';		/* where the dump's NUL was: one write */
	do
		n = write(fd, p, len + 1);
	while (n == -1 && errno == EINTR);
	free(p);
	if (n == -1)
		return art_err_set(err, "io", "write %s: %s", what,
		    strerror(errno));
	if ((size_t)n != len + 1)
		return art_err_set(err, "io", "write %s: short write", what);
	return 0;
}
