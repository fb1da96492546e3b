/* mcp-fuzz - the MCP client's reader on any bytes from a server
 *
 * What a server writes on its stdout is read by lib/mcp.c's drain() and
 * handle(), which are file-local, so this harness includes mcp.c itself
 * and builds a client as art_mcp_start() would, less the process: its
 * requests go to /dev/null.  The client has sent initialize (id 1) and
 * holds three calls (ids 2, 3, 4) waiting for the tool list, which is
 * asked for as id 5 once initialize is answered.  The input is fed as a
 * server's stdout would be, in chunks, until the client gives up.
 */
#include "../../lib/mcp.c"

#include <fcntl.h>

static int answered;

static void
done_cb(void *ctx, const struct art_mcp_done *d)
{
	(void)ctx;
	if (d->text == NULL || d->text[d->len] != '\0' || d->result == NULL ||
	    d->ok != (d->outcome == ART_MCP_OK))
		abort();
	answered++;
}

static struct art_mcp *
client(void)
{
	struct art_mcp *m;
	struct art_err err;
	int i;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		abort();
	m->pid = -1;
	m->in_fd = m->out_fd = m->err_fd = -1;
	m->tools = jv_array();
	m->listing = jv_array();
	m->next_id = 1;
	m->startup_ms = ART_MCP_CALL_TIMEOUT_MS;
	if ((m->rd = art_ndjson_reader_new(-1, "mcp", ART_MCP_MAX_LINE, 0)) ==
	    NULL || (m->in_fd = open("/dev/null", O_WRONLY)) == -1)
		abort();
	art_tools_tail_init(&m->tail);
	m->st = ST_INIT;
	m->due = now_ms() + m->startup_ms;
	if (send_initialize(m) == -1)
		abort();
	for (i = 0; i < 3; i++)
		if (art_mcp_call(m, "echo", jv_null(), 0, done_cb, NULL,
		    &err) == -1)
			abort();
	return m;
}

/* The first byte is the size of the chunks the rest comes in (0: whole). */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct art_mcp *m;
	struct art_err err;
	size_t chunk, off, n;

	if (size < 1)
		return 0;
	chunk = data[0] != 0 ? data[0] : size;
	data++, size--;
	m = client();
	answered = 0;
	for (off = 0; off < size && m->doom[0] == '\0'; off += n) {
		n = size - off < chunk ? size - off : chunk;
		if (art_ndjson_feed(m->rd, data + off, n, &err) == -1)
			break;
		drain(m);
	}
	if (m->doom[0] == '\0') {
		art_ndjson_feed_eof(m->rd);
		drain(m);
	}
	if (m->st == ST_READY && jv_get_kind(m->tools) != JV_KIND_ARRAY)
		abort();
	art_mcp_free(m);
	return 0;
}
