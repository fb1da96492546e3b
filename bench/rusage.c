/* rusage.c - run a command and write what the kernel says it cost.
 *
 * usage: rusage OUT COMMAND [ARG]...
 *
 * Runs COMMAND with this process's stdin, stdout and stderr, waits for it,
 * and writes one line to OUT: "wall_us user_us sys_us maxrss_kib status".
 * The times come from getrusage(RUSAGE_CHILDREN) at microsecond
 * resolution (so COMMAND's own children are in them once it has waited
 * for them), maxrss is the largest of those processes' peak RSS, and wall
 * is CLOCK_MONOTONIC around fork and wait.  Exits with COMMAND's status.
 * bench/compare.sh compiles it with cc into its scratch directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static long long us(struct timeval tv) { return tv.tv_sec * 1000000LL + tv.tv_usec; }

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status, code;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: rusage OUT COMMAND [ARG]...\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("rusage: waitpid");
			return 2;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_CHILDREN, &ru);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 2;
	}
	fprintf(out, "%lld %lld %lld %ld %d\n",
	    (t1.tv_sec - t0.tv_sec) * 1000000LL + (t1.tv_nsec - t0.tv_nsec) / 1000,
	    us(ru.ru_utime), us(ru.ru_stime), ru.ru_maxrss, code);
	fclose(out);
	return code;
}
