/* testdir.h - a unit test's scratch directory, the files in it, removal */
#ifndef ART_TESTDIR_H
#define ART_TESTDIR_H
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char test_dir[256];

static void __attribute__((noreturn, unused))
test_dir_bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* test_dir/name, in a buffer of its own that the next call reuses. */
static const char * __attribute__((unused))
test_dir_path(const char *name)
{
	static char path[2][512];
	static int turn;

	turn = !turn;
	snprintf(path[turn], sizeof(path[turn]), "%s/%s", test_dir, name);
	return path[turn];
}

/* Makes test_dir, "<name>.XXXXXX" under $TMPDIR or /tmp. */
static void __attribute__((unused))
test_dir_make(const char *name)
{
	const char *base = getenv("TMPDIR");

	snprintf(test_dir, sizeof(test_dir), "%s/%s.XXXXXX",
	    base != NULL && *base != '\0' ? base : "/tmp", name);
	if (mkdtemp(test_dir) == NULL)
		test_dir_bail("mkdtemp");
}

/* Writes text to test_dir/name with mode; returns its path (as above). */
static const char * __attribute__((unused))
test_dir_put(const char *name, const char *text, mode_t mode)
{
	const char *path = test_dir_path(name);
	FILE *f;

	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) == EOF || chmod(path, mode) == -1)
		test_dir_bail(path);
	return path;
}

/* Removes path and, when it is a directory, everything below it. */
static void __attribute__((unused))
test_dir_remove_at(const char *path)
{
	char sub[1024];
	struct dirent *de;
	struct stat sb;
	DIR *d;

	if (lstat(path, &sb) == -1)
		return;
	if (!S_ISDIR(sb.st_mode) || (d = opendir(path)) == NULL) {
		unlink(path);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		test_dir_remove_at(sub);
	}
	closedir(d);
	rmdir(path);
}

/* Removes test_dir and all it holds. */
static void __attribute__((unused))
test_dir_remove(void)
{
	test_dir_remove_at(test_dir);
}
#endif
