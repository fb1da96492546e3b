/* agentrt-llm - answer model calls on the bus: llm.request, llm.execute
 *
 * One poll loop: input is read as it comes, answers without a delay go
 * out at once (so they keep their place among the lines passed on), an
 * answer a mock script delays waits in a list ordered by when it is due,
 * and calls to a model over HTTP are in flight together, their sockets in
 * the same poll, while other lines go on being read and answered.  Output goes
 * through an art_outq, so a full pipe never stops the reading either.
 * Input is read with read(2) after poll(2) says so and fed to the line
 * reader: stdin is never made non-blocking, since its open file
 * description may be shared with a terminal or a shell.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "libcurl.h"
#include <jv.h>

#include "cassette.h"
#include "clock.h"
#include "diag.h"
#include "err.h"
#include "input.h"
#include "json.h"
#include "llm.h"
#include "mock.h"
#include "ndjson.h"
#include "opt.h"
#include "outq.h"
#include "price.h"
#include "request.h"

struct opts {
	size_t		 max_line;
	const char	*model;
	jv		 script;	/* --script's contents, or null */
	const char	*record;	/* --record FILE */
	const char	*replay;	/* --replay FILE */
	const char	*prices;	/* --prices FILE */
	bool		 models;	/* --models */
};

/* An answer held back by its delay. */
struct held {
	int64_t	 due;		/* CLOCK_MONOTONIC, ms */
	jv	 lines;
};

struct stage {
	const struct opts	*o;
	struct art_input	*in;	/* the files named, or stdin */
	struct art_outq		*out;
	struct art_llm		*llm;
	struct held		*held;	/* by due time, then arrival */
	size_t			 nheld, capheld;
	/* The line the reader passes raw is a model request to parse. */
	bool			 raw_request;
	struct art_llm_reuse	 reuse;
	/* A request naming its tools by config version reads them here. */
	struct art_request_reader reader;
};

enum { OPT_SCRIPT = 256, OPT_MAX_LINE, OPT_RECORD, OPT_REPLAY, OPT_PRICES,
    OPT_MODELS };

/* The models completion offers: those built in, and the providers. */
#define MODELS	"mock/echo mock/script openai/ anthropic/"

static const struct art_opt options[] = {
	{ "model", 'm', "MODEL", ART_OPT_MODEL, MODELS, NULL, 0,
	    "answer every call with MODEL (provider/name), whatever the "
	    "request names" },
	{ "script", OPT_SCRIPT, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "play FILE, a JSON array of steps, for every mock/script call, "
	    "whatever the call's mock settings say" },
	{ "record", OPT_RECORD, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "append every exchange (request, deltas, response or error; "
	    "never a key or header) to the cassette FILE" },
	{ "replay", OPT_REPLAY, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "answer every call from the cassette FILE, matched by model and "
	    "request, with no network" },
	{ "prices", OPT_PRICES, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "add the model prices in FILE (JSON, dollars per million "
	    "tokens) to the built-in ones, for \"cost\"" },
	{ "models", OPT_MODELS, NULL, ART_OPT_TEXT, NULL, NULL, ART_OPT_EXITS,
	    "print the models this stage knows, one JSON line each (with "
	    "their prices, and --prices'), and exit" },
	{ "max-line", OPT_MAX_LINE, "BYTES", ART_OPT_TEXT, NULL, NULL, 0,
	    "the longest input line, with an optional K, M or G suffix "
	    "(default 64M)" },
	ART_OPT_STANDARD
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: agentrt-llm [OPTIONS] [FILE...]\n"
"\n"
"Answer model calls on an NDJSON bus: llm.request lines with llm.result or\n"
"llm.error, and decision.request lines for llm.execute with a\n"
"decision.response.  Every other line is passed on unchanged.  Reads the\n"
"FILEs in turn, or the standard input; '-' is the standard input.\n"
"\n"
"Options:\n", stdout);
	art_opt_help(stdout, options, 22);
	fputs(
"\n"
"Models: mock/echo, mock/script, openai/NAME ($OPENAI_API_KEY,\n"
"$OPENAI_BASE_URL), anthropic/NAME ($ANTHROPIC_API_KEY, $ANTHROPIC_BASE_URL).\n"
"Exit status: 0 end of input, 1 failure, 2 usage error.\n", stdout);
	art_opt_exit();
}

/* The version, and those of the libraries this program links. */
static _Noreturn void
version(void)
{
	struct art_err err;
	const char *const libs[] = { "libjq", ART_JQ_VERSION, "libcurl",
	    art_curl_version(&err), NULL };

	art_opt_version("agentrt-llm", PACKAGE_VERSION, libs);
}

static _Noreturn void
usage(void)
{
	fputs("usage: agentrt-llm [-m MODEL] [--script FILE] [--record FILE] "
	    "[--replay FILE]\n"
	    "                  [--prices FILE] [--max-line BYTES] [FILE...]\n"
	    "Try 'agentrt-llm --help' for more information.\n", stderr);
	exit(ART_EXIT_USAGE);
}

/* --completions: the options, for the shells; no command to name. */
static _Noreturn void
completions(const char *context)
{
	art_opt_completions(options, context, usage);
}



/* --- output ----------------------------------------------------------- */

/* The prices: the built-in ones, and --prices' (else $AGENTRT_PRICES). */
static struct art_prices *
load_prices(const struct opts *o)
{
	const char *path = o->prices != NULL ? o->prices :
	    getenv("AGENTRT_PRICES");
	struct art_prices *p;
	struct art_err err;

	if ((p = art_prices_new()) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	if (path != NULL && *path != '\0' &&
	    art_prices_load(p, path, &err) == -1)
		art_die(ART_EXIT_USAGE, "%s", err.msg);
	return p;
}

/*
 * --models: the mock models, which cost nothing, then every priced
 * model, as the runtime API's ModelEntry (art_prices_list()).  Any other
 * model of a provider can be named too: these are the ones it knows.
 */
static int
list_models(const struct opts *o)
{
	static const char *const mocks[] = { "echo", "script", NULL };
	struct art_prices *p = load_prices(o);
	jv priced = art_prices_list(p), all = jv_array(), e, text;
	int i, bad = 0;

	art_prices_free(p);
	if (!jv_is_valid(priced))
		art_die(ART_EXIT_FAIL, "out of memory");
	for (i = 0; mocks[i] != NULL; i++) {
		e = art_json_set(jv_object(), "model",
		    jv_string_fmt("mock/%s", mocks[i]));
		e = art_json_set(e, "model_id", jv_string(mocks[i]));
		all = jv_array_append(all, art_json_set(e, "provider",
		    jv_string("mock")));
	}
	all = jv_array_concat(all, priced);
	jv_array_foreach(all, j, m) {
		text = jv_dump_string(m, 0);
		bad |= puts(jv_string_value(text)) == EOF;
		jv_free(text);
	}
	jv_free(all);
	if (bad || fflush(stdout) == EOF)
		art_die(ART_EXIT_FAIL, "write: %s", strerror(errno));
	return ART_EXIT_OK;
}

static void
emit(struct stage *st, jv line)
{
	struct art_err err;

	if (art_outq_push(st->out, line, &err) == -1)
		art_die(ART_EXIT_FAIL, "%s", art_err_is(&err, "nomem") ?
		    "out of memory" : err.msg);
}

static void
emit_all(struct stage *st, jv lines)
{
	jv_array_foreach(lines, i, l)
		emit(st, l);
	jv_free(lines);
}

/* Keeps lines (consumed) until delay_ms from now, after those due as soon. */
static void
hold(struct stage *st, int64_t delay_ms, jv lines)
{
	int64_t due = art_clock_mono_ms() + delay_ms;
	size_t i = st->nheld;

	if (art_grow(&st->held, &st->capheld, st->nheld + 1,
	    sizeof(*st->held)) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	while (i > 0 && st->held[i - 1].due > due)
		i--;
	memmove(st->held + i + 1, st->held + i,
	    (st->nheld - i) * sizeof(*st->held));
	st->held[i] = (struct held){ .due = due, .lines = lines };
	st->nheld++;
}

/* Sends every held answer that is due. */
static void
release_due(struct stage *st)
{
	int64_t now = art_clock_mono_ms();
	size_t n = 0;

	while (n < st->nheld && st->held[n].due <= now)
		emit_all(st, st->held[n++].lines);
	if (n == 0)
		return;
	st->nheld -= n;
	memmove(st->held, st->held + n, st->nheld * sizeof(*st->held));
}

/* --- answering -------------------------------------------------------- */

/* A model call that cannot be read: an error line, and a line on stderr. */
static void
bad_request(struct stage *st, const jv *line, const struct art_err *err)
{
	const char *sid = art_json_str(line, "session_id");
	char msg[512];
	jv text = jv_dump_string(jv_copy(*line), 0), e;

	const struct art_ndjson_reader *rd = art_input_reader(st->in);

	snprintf(msg, sizeof(msg), "%s:%zu: %s", art_ndjson_name(rd),
	    art_ndjson_lineno(rd), err->msg);
	art_warn("%s", msg);
	e = art_ndjson_error("bad_request", msg, jv_string_value(text),
	    (size_t)jv_string_length_bytes(jv_copy(text)));
	if (sid != NULL)
		e = jv_object_set(e, jv_string("session_id"), jv_string(sid));
	jv_free(text);
	emit(st, e);
}

/* The dispatcher's answers: out now, or held for their delay. */
static void
answered(void *ctx, jv lines, int64_t delay_ms)
{
	struct stage *st = ctx;

	if (delay_ms > 0)
		hold(st, delay_ms, lines);
	else
		emit_all(st, lines);
}

/* One line read: answered, held, or passed on.  Consumes line. */
static void
take(struct stage *st, jv line)
{
	struct art_llm_call call;
	struct art_err err;

	enum art_llm_kind kind = art_llm_kind_of(&line);
	jv whole;

	if (kind == ART_LLM_NONE) {
		emit(st, line);
		return;
	}
	if (kind == ART_LLM_REQUEST && art_request_by_ref(&line)) {
		whole = art_request_read(&st->reader, &line, &err);
		if (!jv_is_valid(whole)) {
			if (art_err_is(&err, "nomem"))
				art_die(ART_EXIT_FAIL, "out of memory");
			art_err_prefix(&err, "llm.request by reference");
			bad_request(st, &line, &err);
			jv_free(line);
			return;
		}
		jv_free(line);
		line = whole;
	}
	if (art_llm_call_init(&call, &line, &err) == -1) {
		bad_request(st, &line, &err);
		jv_free(line);
		return;
	}
	jv_free(line);
	art_llm_submit(st->llm, &call);
	art_llm_call_release(&call);
}

/*
 * The lines this stage answers; the rest pass by unparsed.  A model
 * request comes raw too, flagged, to be parsed for what it adds to the
 * one before (art_llm_parse_request).
 */
static int
wanted(const char *type, const char *trigger, void *ctx)
{
	struct stage *st = ctx;

	st->raw_request = strcmp(type, "llm.request") == 0;
	/* No trigger yet: a model request is parsed here, and checked so. */
	if (trigger == NULL)
		return st->raw_request ? ART_NDJSON_WANT_RAW :
		    strcmp(type, "decision.request") == 0;
	return strcmp(type, "decision.request") == 0 &&
	    strcmp(trigger, "llm.execute") == 0;
}

static void
emit_raw(struct stage *st, const char *p, size_t n)
{
	struct art_err err;

	if (art_outq_push_raw(st->out, p, n, &err) == -1 ||
	    art_outq_push_raw(st->out, "\n", 1, &err) == -1)
		art_die(ART_EXIT_FAIL, "%s", art_err_is(&err, "nomem") ?
		    "out of memory" : err.msg);
}

/* The error line for a model request that is not JSON (raw, n). */
static jv
bad_json(const struct art_ndjson_reader *rd, const char *raw, size_t n,
    const struct art_err *err)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s:%zu: %s", art_ndjson_name(rd),
	    art_ndjson_lineno(rd), err->msg);
	return art_ndjson_error(err->code != NULL ? err->code : "bad_json",
	    msg, raw, n);
}

/* Takes every whole line the reader holds. */
static void
drain(struct stage *st)
{
	struct art_ndjson_reader *rd = art_input_reader(st->in);
	enum art_ndjson_status s;
	struct art_err err;
	jv line;

	while ((s = art_ndjson_next(rd, &line, &err)) != ART_NDJSON_AGAIN
	    && s != ART_NDJSON_EOF) {
		if (s == ART_NDJSON_OK) {
			take(st, line);
			continue;
		}
		if (s == ART_NDJSON_RAW) {
			size_t n;
			const char *raw = art_ndjson_raw(rd, &n);

			if (!st->raw_request) {
				emit_raw(st, raw, n);
				continue;
			}
			st->raw_request = false;
			line = art_llm_parse_request(&st->reuse, raw, n, &err);
			if (!jv_is_valid(line) && art_err_is(&err, "nomem")) {
				jv_free(line);
				art_die(ART_EXIT_FAIL, "%s", err.msg);
			}
			if (!jv_is_valid(line)) {
				/* Not scanned on the way in: said here. */
				jv_free(line);
				art_warn("%s:%zu: %s", art_ndjson_name(rd),
				    art_ndjson_lineno(rd), err.msg);
				emit(st, bad_json(rd, raw, n, &err));
				continue;
			}
			take(st, line);
			continue;
		}
		if (s == ART_NDJSON_IOERR)	/* cannot happen when fed */
			art_die(ART_EXIT_FAIL, "%s", err.msg);
		art_warn("%s:%zu: %s", art_ndjson_name(rd),
		    art_ndjson_lineno(rd), err.msg);
		emit(st, art_ndjson_bad_line(rd, &err));
	}
}

/* --- input ------------------------------------------------------------ */

/* Opens the next file that can be opened, naming those that cannot. */
static void
open_next(struct stage *st)
{
	struct art_err err;

	while (art_input_open(st->in, &err) == -1) {
		if (art_err_is(&err, "nomem"))
			art_die(ART_EXIT_FAIL, "out of memory");
		art_warn("%s", err.msg);
	}
}

/* Reads what the current file has, and takes the lines it completes. */
static void
read_some(struct stage *st)
{
	struct art_err err;
	int rc = art_input_read(st->in, false, &err);

	if (rc == -1) {
		if (art_err_is(&err, "nomem"))
			art_die(ART_EXIT_FAIL, "out of memory");
		art_warn("%s", err.msg);
	}
	drain(st);
	if (rc <= 0)
		open_next(st);
}

/* --- the loop --------------------------------------------------------- */

/*
 * How long poll may wait: until the next held answer is due, or the HTTP
 * transfers want attention, or forever.
 */
static int
poll_timeout(const struct stage *st)
{
	int64_t wait;
	int http = art_llm_timeout(st->llm);

	if (st->nheld == 0)
		return http;
	wait = st->held[0].due - art_clock_mono_ms();
	wait = wait < 0 ? 0 : wait > INT_MAX ? INT_MAX : wait;
	return http >= 0 && http < wait ? http : (int)wait;
}

static void
wait_and_work(struct stage *st)
{
	struct pollfd fixed[2 + 64], *pfd = fixed;
	struct art_err err;
	size_t n = 0, nhttp;
	int in = -1, out = -1;

	if (art_input_fd(st->in) != -1) {
		pfd[in = (int)n++] = (struct pollfd){
		    .fd = art_input_fd(st->in),
		    .events = POLLIN };
	}
	if (art_outq_pending(st->out) > 0) {
		pfd[out = (int)n++] = (struct pollfd){
		    .fd = art_outq_fd(st->out), .events = POLLOUT };
	}
	nhttp = art_llm_pollfds(st->llm, pfd + n, 64);
	if (nhttp > 64) {
		if ((pfd = calloc(n + nhttp, sizeof(*pfd))) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		memcpy(pfd, fixed, n * sizeof(*pfd));
		art_llm_pollfds(st->llm, pfd + n, nhttp);
	}
	if (poll(pfd, (nfds_t)(n + nhttp), poll_timeout(st)) == -1) {
		if (errno != EINTR)
			art_die(ART_EXIT_FAIL, "poll: %s", strerror(errno));
		nhttp = 0;
	}
	if (out >= 0 && pfd[out].revents != 0 &&
	    art_outq_flush(st->out, &err) == -1)
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	art_llm_work(st->llm, pfd + n, nhttp);
	if (in >= 0 && pfd[in].revents != 0)
		read_some(st);
	release_due(st);
	if (pfd != fixed)
		free(pfd);
}


static const char *
env(const char *name)
{
	return getenv(name);
}

/*
 * libcurl is opened, once, when the first HTTP provider opens: a ring of
 * mock calls never loads it, nor TLS.
 */
static int
net_init(struct art_err *err)
{
	return art_curl_load(err);
}

static int
run(const struct opts *o, char **argv)
{
	struct art_clock bus_clock;
	struct art_llm_opts lo = { .model = o->model,
	    .mock_script = o->script, .env = env, .clock = &bus_clock,
	    .record_fd = -1, .net_init = net_init };
	struct stage st = { .o = o };
	struct art_err err;
	int status;

	/* AGENTRT_CLOCK pins the bus's clock, as the engine's. */
	if (art_clock_init(&bus_clock, getenv("AGENTRT_CLOCK"), &err) == -1)
		art_die(ART_EXIT_USAGE, "bad AGENTRT_CLOCK: %s", err.msg);
	lo.prices = load_prices(o);
	if (o->replay != NULL &&
	    (lo.replay = art_cassette_load(o->replay, &err)) == NULL)
		art_die(ART_EXIT_USAGE, "%s", err.msg);
	if (o->record != NULL && (lo.record_fd = open(o->record,
	    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) == -1)
		art_die(ART_EXIT_USAGE, "--record '%s': %s", o->record,
		    strerror(errno));

	if ((st.in = art_input_new(argv, o->max_line, ART_NDJSON_REQUIRE_TYPE,
	    "open")) == NULL ||
	    (st.out = art_outq_new(STDOUT_FILENO)) == NULL ||
	    (st.llm = art_llm_new(&lo, answered, &st)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	art_input_set_filter(st.in, wanted, &st);
	open_next(&st);
	while (art_input_fd(st.in) != -1 || st.nheld > 0 ||
	    art_llm_active(st.llm) > 0 || art_outq_pending(st.out) > 0)
		wait_and_work(&st);
	art_llm_free(st.llm);
	art_llm_reuse_free(&st.reuse);
	art_request_reader_free(&st.reader);
	art_outq_free(st.out);
	art_prices_free(lo.prices);
	art_cassette_free(lo.replay);
	if (lo.record_fd != -1)
		close(lo.record_fd);
	art_curl_unload();
	free(st.held);
	status = art_input_failed(st.in) ? ART_EXIT_FAIL : ART_EXIT_OK;
	art_input_free(st.in);
	return status;
}

int
main(int argc, char *argv[])
{
	struct opts o = { .max_line = ART_NDJSON_MAX_LINE,
	    .script = jv_null() };
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	struct art_err err;
	int c, status;

	art_diag_init(argv[0]);
	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, "", NULL, shortopts, sizeof(shortopts));
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'm':
			if (art_llm_check_model(optarg, &err) == -1) {
				art_warn("bad --model: %s", err.msg);
				usage();
			}
			o.model = optarg;
			break;
		case OPT_SCRIPT:
			jv_free(o.script);
			o.script = art_mock_read_script(optarg, &err);
			if (!jv_is_valid(o.script))
				art_die(ART_EXIT_USAGE, "%s", err.msg);
			break;
		case OPT_MAX_LINE:
			o.max_line = art_opt_size_arg("--max-line", optarg);
			break;
		case OPT_RECORD:
			o.record = optarg;
			break;
		case OPT_REPLAY:
			o.replay = optarg;
			break;
		case OPT_PRICES:
			o.prices = optarg;
			break;
		case OPT_MODELS:
			o.models = true;
			break;
		case 'h':
			help();
		case 'V':
			version();
		case ART_OPT_COMPLETIONS:
			completions(argv[optind]);
		default:
			usage();
		}
	}
	status = o.models ? list_models(&o) : run(&o, argv + optind);
	jv_free(o.script);
	return status;
}
