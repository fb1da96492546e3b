/* testdb.h - a fresh store in a temporary directory, for unit tests */
#ifndef ART_TESTDB_H
#define ART_TESTDB_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "store.h"

struct testdb {
	char			 dir[256];
	struct art_clock	 clock;
	struct art_store	*st;
};

/* rm -rf dir (a mkdtemp name: no quoting needed). */
static void
testdb_rm(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "testdb: could not remove %s\n", dir);
}

/* Opens a new store, the clock pinned; exits the test on failure. */
static void __attribute__((unused))
testdb_open(struct testdb *db, size_t map_start, size_t map_max)
{
	struct art_store_opts o = { 0 };
	struct art_err err;
	const char *tmp = getenv("TMPDIR");

	snprintf(db->dir, sizeof(db->dir), "%s/agentrt-test-XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(db->dir) == NULL ||
	    art_clock_init(&db->clock, "2026-01-02T03:04:05Z", &err) == -1) {
		perror("testdb");
		exit(99);
	}
	o.dir = db->dir;
	o.clock = &db->clock;
	o.map_start = map_start;
	o.map_max = map_max;
	o.create = 1;
	if (art_store_open(&db->st, &o, &err) == -1) {
		fprintf(stderr, "testdb: %s\n", err.msg);
		exit(99);
	}
}

/* Closes the store and removes its directory. */
static void __attribute__((unused))
testdb_close(struct testdb *db)
{
	art_store_close(db->st);
	db->st = NULL;
	testdb_rm(db->dir);
}

#endif
