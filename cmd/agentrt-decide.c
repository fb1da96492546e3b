/* agentrt-decide - answer decision.request lines: by proposal or by jq */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jv.h>

#include "clock.h"
#include "decide.h"
#include "diag.h"
#include "err.h"
#include "input.h"
#include "json.h"
#include "ndjson.h"
#include "libcurl.h"
#include "opt.h"
#include "store.h"
#include "worker.h"

struct opts {
	const char	*program;	/* --jq */
	const char	*program_file;	/* -f */
	jv		 program_text;	/* -f's contents */
	jv		 vars;		/* --arg and the like */
	bool		 has_vars;
	const char	*exec;		/* --exec */
	const char	*url;		/* --url */
	const char	*secret_env;	/* --signing-secret-env */
	const char	**agents;	/* --agent, repeated */
	size_t		 nagents;
	size_t		 max_line;
};

/* What the loop keeps across lines and inputs. */
struct run {
	struct art_decide	*d;
	struct art_worker	*w;	/* --exec, --url */
	bool			 warned_extra;
};

enum {
	OPT_JQ = 256, OPT_ARG, OPT_ARGJSON, OPT_SLURPFILE, OPT_RAWFILE,
	OPT_AGENT, OPT_MAX_LINE, OPT_EXEC, OPT_URL, OPT_SECRET_ENV
};

static const struct art_opt options[] = {
	{ "jq", OPT_JQ, "PROGRAM", ART_OPT_TEXT, NULL, NULL, 0,
	    "answer with what the jq PROGRAM yields" },
	{ "from-file", 'f', "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "read the jq program from FILE" },
	{ "exec", OPT_EXEC, "COMMAND", ART_OPT_COMMAND, NULL, NULL, 0,
	    "answer with a worker process: COMMAND (run by /bin/sh, kept "
	    "running) reads one request per line and writes one answer per "
	    "line" },
	{ "url", OPT_URL, "URL", ART_OPT_URL, NULL, NULL, 0,
	    "answer with an HTTP worker: POST each request to URL; a JSON or "
	    "event-stream answer" },
	{ "signing-secret-env", OPT_SECRET_ENV, "VAR", ART_OPT_ENV, NULL,
	    NULL, 0,
	    "(--url) sign each body with the secret in $VAR: "
	    "X-Agentrt-Signature: sha256=HMAC-SHA256 in hex" },
	{ "arg", OPT_ARG, "NAME VALUE", ART_OPT_TEXT, NULL, NULL,
	    ART_OPT_MANY, "set $NAME in the program to the string VALUE" },
	{ "argjson", OPT_ARGJSON, "NAME JSON", ART_OPT_TEXT, NULL, NULL,
	    ART_OPT_MANY, "set $NAME to the JSON value" },
	{ "slurpfile", OPT_SLURPFILE, "NAME FILE", ART_OPT_FILE, NULL, NULL,
	    ART_OPT_MANY,
	    "set $NAME to an array of the JSON values in FILE" },
	{ "rawfile", OPT_RAWFILE, "NAME FILE", ART_OPT_FILE, NULL, NULL,
	    ART_OPT_MANY, "set $NAME to the text of FILE" },
	{ "agent", OPT_AGENT, "ID", ART_OPT_AGENT, NULL, NULL, ART_OPT_MANY,
	    "answer only requests whose agent_id is ID; repeat it for more "
	    "agents" },
	{ "max-line", OPT_MAX_LINE, "BYTES", ART_OPT_TEXT, NULL, NULL, 0,
	    "the longest input line (default 64M); K, M, G and T suffixes are "
	    "powers of 1024" },
	ART_OPT_STANDARD
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: agentrt-decide [--jq PROGRAM | -f FILE | --exec COMMAND | --url URL]\n"
"                      [OPTIONS] [FILE...]\n"
"\n"
"Answer decision.request lines: with each request's proposal, with the\n"
"first value a jq program makes of the request, or with a worker's answer.\n"
"Requests left unanswered and every other line are passed on unchanged, in\n"
"order.\n"
"\n"
"Options:\n", stdout);
	art_opt_help(stdout, options, 28);
	fputs(
"\n"
"A worker answers a DecisionResponse (bare or whole), null to pass the\n"
"request on, or {\"type\":\"decision.error\",\"error\":...,\"retryable\":...}.\n"
"A worker that dies, hangs past the request's deadline or fails (HTTP 5xx,\n"
"no connection) gets a decision.error line sent for it, retryable; a dead\n"
"process is started again after a backoff.\n"
"\n"
"With no FILE, or when FILE is -, read the standard input.\n"
"Exit status: 0 end of input, 1 failure, 2 usage error or a program that\n"
"does not compile.\n", stdout);
	art_opt_exit();
}

/* The version, and those of the libraries this program links. */
static _Noreturn void
version(void)
{
	struct art_err err;
	char lmdb[32];
	const char *const libs[] = { "libjq", ART_JQ_VERSION, "LMDB",
	    art_store_lmdb_version(lmdb, sizeof(lmdb)), "libcurl",
	    art_curl_version(&err), NULL };

	art_opt_version("agentrt-decide", PACKAGE_VERSION, libs);
}

static _Noreturn void
usage(void)
{
	fputs("usage: agentrt-decide [--jq PROGRAM | -f FILE | --exec COMMAND "
	    "| --url URL]\n"
	    "                      [--arg NAME VALUE] [--argjson NAME JSON] "
	    "[--agent ID]\n"
	    "                      [--signing-secret-env VAR] "
	    "[--max-line BYTES] [FILE...]\n"
	    "Try 'agentrt-decide --help' for more information.\n", stderr);
	exit(ART_EXIT_USAGE);
}

/* --completions: the options, for the shells; no command to name. */
static _Noreturn void
completions(const char *context)
{
	art_opt_completions(options, context, usage);
}

/* --- options ---------------------------------------------------------- */

/* A file's whole text, as a jv string; a usage error when unreadable. */
static jv
read_text(const char *what, const char *path)
{
	char buf[65536];
	size_t n;
	FILE *f;
	jv text;

	if ((f = fopen(path, "r")) == NULL)
		art_die(ART_EXIT_USAGE, "read %s '%s': %s", what, path,
		    strerror(errno));
	text = jv_string("");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		text = jv_string_append_buf(text, buf, (int)n);
	if (ferror(f)) {
		jv_free(text);
		art_die(ART_EXIT_USAGE, "read %s '%s': %s", what, path,
		    strerror(errno));
	}
	fclose(f);
	return text;
}

/* Every JSON value in text (consumed), as an array. */
static jv
parse_all(jv text, const char *name, const char *path)
{
	jv_parser *p = jv_parser_new(0);
	jv all = jv_array(), v, msg;

	jv_parser_set_buf(p, jv_string_value(text),
	    jv_string_length_bytes(jv_copy(text)), 0);
	while (jv_is_valid(v = jv_parser_next(p)))
		all = jv_array_append(all, v);
	if (jv_invalid_has_msg(jv_copy(v))) {
		msg = jv_invalid_get_msg(v);
		art_die(ART_EXIT_USAGE, "bad --slurpfile %s '%s': %s", name,
		    path, jv_get_kind(msg) == JV_KIND_STRING ?
		    jv_string_value(msg) : "not JSON");
	}
	jv_free(v);
	jv_parser_free(p);
	jv_free(text);
	return all;
}

/* The second argument of a two-argument option such as --arg NAME VALUE. */
static const char *
second_arg(int argc, char **argv, const char *opt)
{
	if (optind >= argc) {
		art_warn("option '--%s' needs two arguments", opt);
		usage();
	}
	return argv[optind++];
}

static jv
argjson(const char *name, const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err);

	if (!jv_is_valid(v))
		art_die(ART_EXIT_USAGE, "bad --argjson %s: %s", name, err.msg);
	return v;
}


static void
set_var(struct opts *o, const char *name, jv value)
{
	o->vars = jv_object_set(o->vars, jv_string(name), value);
	o->has_vars = true;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	const char *name, *path;
	int c;

	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, "", NULL, shortopts, sizeof(shortopts));
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JQ: o->program = optarg; break;
		case 'f': o->program_file = optarg; break;
		case OPT_ARG:
			name = optarg;
			set_var(o, name, jv_string(second_arg(argc, argv,
			    "arg")));
			break;
		case OPT_ARGJSON:
			name = optarg;
			set_var(o, name, argjson(name, second_arg(argc, argv,
			    "argjson")));
			break;
		case OPT_SLURPFILE:
			name = optarg;
			path = second_arg(argc, argv, "slurpfile");
			set_var(o, name, parse_all(read_text("--slurpfile",
			    path), name, path));
			break;
		case OPT_RAWFILE:
			name = optarg;
			path = second_arg(argc, argv, "rawfile");
			set_var(o, name, read_text("--rawfile", path));
			break;
		case OPT_EXEC: o->exec = optarg; break;
		case OPT_URL: o->url = optarg; break;
		case OPT_SECRET_ENV: o->secret_env = optarg; break;
		case OPT_AGENT: o->agents[o->nagents++] = optarg; break;
		case OPT_MAX_LINE:
			o->max_line = art_opt_size_arg("--max-line", optarg);
			break;
		case 'h': help();
		case 'V': version();
		case ART_OPT_COMPLETIONS: completions(argv[optind]);
		default: usage();
		}
	}
}

/* Checks the options together; reads -f's program. */
static void
prepare(struct opts *o)
{
	if ((o->program != NULL) + (o->program_file != NULL) +
	    (o->exec != NULL) + (o->url != NULL) > 1) {
		art_warn("give one of --jq, -f, --exec and --url");
		usage();
	}
	if (o->secret_env != NULL && o->url == NULL) {
		art_warn("--signing-secret-env signs --url's requests: give "
		    "--url");
		usage();
	}
	if (o->exec != NULL && o->exec[strspn(o->exec, " \t")] == '\0')
		art_die(ART_EXIT_USAGE, "--exec: the command is empty");
	if (o->url != NULL && strncmp(o->url, "http://", 7) != 0 &&
	    strncmp(o->url, "https://", 8) != 0)
		art_die(ART_EXIT_USAGE, "--url '%s': not an http:// or "
		    "https:// URL", o->url);
	if (o->has_vars && o->program == NULL && o->program_file == NULL) {
		art_warn("--arg, --argjson, --slurpfile and --rawfile need a "
		    "program (--jq or -f)");
		usage();
	}
	if (o->program_file != NULL)
		o->program_text = read_text("program", o->program_file);
}

/* --- the loop --------------------------------------------------------- */

/*
 * One line out; -1, said on stderr, when the write failed.  The caller
 * stops then, and main frees what it holds before exiting 1.
 */
static int
put_raw(const char *p, size_t n)
{
	if (fwrite(p, 1, n, stdout) != n || putc('\n', stdout) == EOF ||
	    fflush(stdout) == EOF || ferror(stdout)) {
		art_warn("write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int
put_line(jv v)
{
	struct art_err err;

	if (art_ndjson_write(stdout, v, &err) == -1) {
		art_warn("%s", err.msg);
		return -1;
	}
	return 0;
}

/* jq's debug builtin, as jq prints it. */
static void
debug_value(void *arg, jv v)
{
	jv s = jv_dump_string(jv_array_append(jv_array_append(jv_array(),
	    jv_string("DEBUG:")), v), 0);

	(void)arg;
	art_warn("%s", jv_string_value(s));
	jv_free(s);
}

/* Answers or passes on one line; -1 when writing failed. */
static int
answer(struct run *r, const struct art_ndjson_reader *rd, const jv *line)
{
	struct art_err err;
	const char *raw;
	size_t rawlen;
	bool extra;
	jv out;
	enum art_decide_verdict v;

	raw = art_ndjson_raw(rd, &rawlen);
	art_err_clear(&err);
	v = art_decide_raw(r->d, line, raw, rawlen, &out, &extra, &err);
	if (extra && !r->warned_extra) {
		art_warn("%s:%zu: the program yielded more than one value; "
		    "only the first counts", art_ndjson_name(rd),
		    art_ndjson_lineno(rd));
		r->warned_extra = true;
	}
	switch (v) {
	case ART_DECIDE_ANSWER:
		/* A worker that failed is answered for: say how. */
		if (err.code != NULL)
			art_warn("%s:%zu: %s", art_ndjson_name(rd),
			    art_ndjson_lineno(rd), err.msg);
		return put_line(out);
	case ART_DECIDE_FAIL:
		art_warn("%s:%zu: %s", art_ndjson_name(rd),
		    art_ndjson_lineno(rd), err.msg);
		if (put_line(out) == -1)
			return -1;
		return put_raw(raw, rawlen);
	case ART_DECIDE_PASS:
		break;
	}
	return put_raw(raw, rawlen);
}

/* One line of the reader; -1 when writing failed. */
static int
take(struct run *r, const struct art_ndjson_reader *rd,
    enum art_ndjson_status st, jv line, const struct art_err *err)
{
	const char *raw;
	size_t rawlen;
	int rc;

	switch (st) {
	case ART_NDJSON_OK:
		rc = answer(r, rd, &line);
		jv_free(line);
		return rc;
	case ART_NDJSON_RAW:
		raw = art_ndjson_raw(rd, &rawlen);
		return put_raw(raw, rawlen);
	default:
		art_warn("%s:%zu: %s", art_ndjson_name(rd),
		    art_ndjson_lineno(rd), err->msg);
		return put_line(art_ndjson_bad_line(rd, err));
	}
}

/* Filters the current input to its end; -1 when writing failed. */
static int
filter(struct run *r, struct art_input *in)
{
	struct art_ndjson_reader *rd = art_input_reader(in);
	enum art_ndjson_status st;
	struct art_err err;
	jv line;

	while ((st = art_ndjson_next(rd, &line, &err)) != ART_NDJSON_EOF) {
		if (st != ART_NDJSON_AGAIN) {
			if (take(r, rd, st, line, &err) == -1)
				return -1;
			continue;
		}
		if (art_input_read(in, true, &err) == -1) {
			if (art_err_is(&err, "nomem"))
				art_die(ART_EXIT_FAIL, "out of memory");
			art_warn("%s", err.msg);
		}
	}
	return 0;
}

/*
 * Filters each input in turn; one that cannot be opened or read is named
 * and the next is read.  A failed write ends the run.
 */
static int
filter_all(struct run *r, const struct opts *o, char **files)
{
	struct art_input *in;
	struct art_err err;
	int rc, status = ART_EXIT_OK;

	if ((in = art_input_new(files, o->max_line, ART_NDJSON_REQUIRE_TYPE,
	    "read")) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	art_input_set_filter(in, art_decide_wants, NULL);
	while ((rc = art_input_open(in, &err)) != 0) {
		if (rc == -1) {
			if (art_err_is(&err, "nomem"))
				art_die(ART_EXIT_FAIL, "out of memory");
			art_warn("%s", err.msg);
		} else if (filter(r, in) == -1) {
			status = ART_EXIT_FAIL;
			break;
		}
	}
	if (art_input_failed(in))
		status = ART_EXIT_FAIL;
	art_input_free(in);
	return status;
}

static enum art_decide_verdict
ask_worker(void *arg, const jv *line, const char *raw, size_t rawlen,
    jv *out, struct art_err *err)
{
	return art_worker_ask(arg, line, raw, rawlen, out, err);
}

/* A streamed token delta, on the bus at once. */
static int
emit(void *arg, jv line)
{
	(void)arg;
	return put_line(line);
}

/*
 * The --exec or --url worker, or NULL.  The secret is read from the
 * environment here and never said anywhere.
 */
static struct art_worker *
worker(const struct opts *o)
{
	static struct art_clock wclock;	/* the worker's, for its life */
	struct art_worker_conf conf = {
		.exec = o->exec,
		.url = o->url,
		.max_line = o->max_line,
		.clock = &wclock,
		.emit = emit,
	};
	struct art_worker *w;
	struct art_err err;

	if (o->exec == NULL && o->url == NULL)
		return NULL;
	if (art_clock_init(&wclock, getenv("AGENTRT_CLOCK"), &err) == -1)
		art_die(ART_EXIT_USAGE, "bad AGENTRT_CLOCK: %s", err.msg);
	if (o->secret_env != NULL) {
		conf.secret = getenv(o->secret_env);
		if (conf.secret == NULL || *conf.secret == '\0')
			art_die(ART_EXIT_USAGE, "--signing-secret-env: $%s "
			    "is not set or is empty", o->secret_env);
	}
	/* A worker that dies must not take us with it. */
	if (o->exec != NULL)
		signal(SIGPIPE, SIG_IGN);
	if ((w = art_worker_new(&conf, &err)) == NULL)
		art_die(art_err_is(&err, "usage") ? ART_EXIT_USAGE :
		    ART_EXIT_FAIL, "%s", err.msg);
	return w;
}

/* The compiled decider; a program that does not compile exits 2. */
static struct art_decide *
decider(const struct opts *o, struct art_worker *w)
{
	struct art_decide_conf conf = {
		.program = o->program,
		.vars = o->vars,
		.agents = o->agents,
		.nagents = o->nagents,
		.debug = debug_value,
	};
	struct art_decide *d;
	struct art_err err;
	jv msgs;

	if (o->program_file != NULL)
		conf.program = jv_string_value(o->program_text);
	if (w != NULL) {
		conf.ask = ask_worker;
		conf.ask_arg = w;
	}
	d = art_decide_new(&conf, &msgs, &err);
	if (d == NULL && art_err_is(&err, "nomem"))
		art_die(ART_EXIT_FAIL, "out of memory");
	/* jq's message: "jq: error: ... line 1:", then the program text. */
	jv_array_foreach(msgs, i, m) {
		const char *s = jv_string_value(m);
		int n = (int)strcspn(s, "\n");

		if (n > 0 && s[n - 1] == ':' && s[n] == '\n')
			n--;
		art_warn("%.*s", n, s);
		jv_free(m);
	}
	jv_free(msgs);
	if (d == NULL)
		exit(ART_EXIT_USAGE);
	return d;
}

int
main(int argc, char *argv[])
{
	struct opts o = { .vars = jv_object(), .program_text = jv_null(),
	    .max_line = ART_NDJSON_MAX_LINE };
	struct run r = { 0 };
	int status;

	art_diag_init(argv[0]);
	if ((o.agents = calloc((size_t)argc + 1, sizeof(*o.agents))) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	parse(argc, argv, &o);
	prepare(&o);
	r.w = worker(&o);
	r.d = decider(&o, r.w);
	status = filter_all(&r, &o, argv + optind);
	art_decide_free(r.d);
	art_worker_free(r.w);
	art_curl_unload();
	jv_free(o.vars);
	jv_free(o.program_text);
	free(o.agents);
	return status;
}
