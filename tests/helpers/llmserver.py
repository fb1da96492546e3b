#!/usr/bin/env python3
"""llmserver.py - a scriptable local HTTP server for agentrt's tests

Usage: llmserver.py --port-file FILE [--fixtures DIR] [--log FILE]

Listens on 127.0.0.1 on a port the kernel picks, writes that port to FILE
(atomically: a temporary file renamed into place) once it is listening, and
serves HTTP/1.1 with keep-alive until SIGTERM.  --fixtures is the directory
fixture/ paths read (default: tests/fixtures next to this script's
directory).  --log appends one JSON line per request:
{"method", "path", "headers": {lower-cased name: value}, "body", "peer"},
the body parsed as JSON, else its text, or null when there is none; peer
is the client's port, the same for requests on one kept-alive connection.

The path scripts the answer: zero or more modifiers, one terminal, then a
tail the terminal ignores (except loop/, which reads the API from it), so
a client's base URL can be http://127.0.0.1:PORT/<scenario>/v1.

  modifiers
    stall/<ms>          sleep before answering
    chunk/<n>           write the body in pieces of n bytes, flushing and
                        sleeping 1 ms between them
    drop/<bytes>        send the status line, the headers and the first
                        <bytes> bytes of the body, then close the socket
                        (no chunk terminator; a Content-Length not met)
  terminals
    fixture/<dir>/<f>   a file under --fixtures: .sse is a 200
                        text/event-stream sent with chunked encoding, one
                        event per chunk; .json is application/json with a
                        Content-Length, status NNN when the name starts
                        "error-NNN-", else 200; .http is a whole raw
                        HTTP/1.1 response, written as it is, then the
                        connection closes
    seq/<dir>/<f>,<g>   fixture/<dir>/<f> for the first request to this
                        path, <g> for the second, and so on; the last
                        answers every request after it
    status/<code>       that status, {"error":{"message":"scripted <code>",
                        "type":"scripted"}}
    garbage             200 application/json "<html>not json</html>"
    echo                200 {"method","path","headers","body"} of the request
    loop/<K>            a K-step tool loop: .../chat/completions answers as
                        OpenAI Chat Completions, .../messages as Anthropic
                        Messages.  n = the tool results after the last user
                        message that is not only tool results; n < K calls
                        tool "add" with {"a": n, "b": 1} (ids call_<n>,
                        toolu_<n>), else the text "done after K steps".
                        "stream": true answers in the provider's SSE shapes.

Anything else is a 404 JSON error; a body loop/ cannot read is a 400.
Python 3 standard library only.
"""
import argparse
import json
import os
import re
import signal
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CREATED = 1700000000            # a fixed clock: answers are deterministic
COMPACT = (",", ":")


def dumps(obj):
    return json.dumps(obj, separators=COMPACT).encode()


def reason(code):
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "Unknown"


def error_body(message, kind):
    return dumps({"error": {"message": message, "type": kind}})


class Reply:
    """One answer: a status, headers, and the body as a list of pieces.

    A streamed reply goes out with chunked encoding, one piece per chunk;
    a raw one is the whole response's bytes, head included.
    """

    def __init__(self, status, ctype=None, pieces=(), stream=False,
                 raw=None):
        self.status = status
        self.ctype = ctype
        self.pieces = [p for p in pieces if p]
        self.stream = stream
        self.raw = raw


def json_reply(status, body):
    return Reply(status, "application/json",
                 [body if isinstance(body, bytes) else dumps(body)])


def sse_reply(pieces):
    return Reply(200, "text/event-stream", pieces, stream=True)


def split_events(data):
    """The bytes of an event stream cut after each blank line."""
    out, i = [], 0
    while i < len(data):
        j = data.find(b"\n\n", i)
        j = len(data) if j < 0 else j + 2
        out.append(data[i:j])
        i = j
    return out


def cut(pieces, limit):
    """The first limit bytes of pieces, still in pieces."""
    out = []
    for p in pieces:
        if limit <= 0:
            break
        out.append(p[:limit])
        limit -= len(out[-1])
    return out


def rechunk(pieces, n):
    data = b"".join(pieces)
    return [data[i:i + n] for i in range(0, len(data), n)]


# --- loop/<K>: the tool loop, in both providers' shapes ---------------------

class BadRequest(Exception):
    pass


def text_len(content):
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(b.get("text", "")) if isinstance(b, dict) and
                   isinstance(b.get("text"), str) else 0 for b in content)
    return 0


def prompt_tokens(msgs):
    chars = sum(text_len(m.get("content")) for m in msgs
                if isinstance(m, dict))
    return 4 * len(msgs) + chars // 4


def only_tool_results(m):
    c = m.get("content")
    return isinstance(c, list) and len(c) > 0 and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c)


def steps_openai(msgs):
    last = -1
    for i, m in enumerate(msgs):
        if isinstance(m, dict) and m.get("role") == "user":
            last = i
    return sum(1 for m in msgs[last + 1:]
               if isinstance(m, dict) and m.get("role") == "tool")


def steps_anthropic(msgs):
    last = -1
    for i, m in enumerate(msgs):
        if isinstance(m, dict) and m.get("role") == "user" and \
                not only_tool_results(m):
            last = i
    n = 0
    for m in msgs[last + 1:]:
        if isinstance(m, dict) and m.get("role") == "user" and \
                isinstance(m.get("content"), list):
            n += sum(1 for b in m["content"] if isinstance(b, dict) and
                     b.get("type") == "tool_result")
    return n


def halves(s):
    h = max(1, len(s) // 2)
    return [s[:h], s[h:]]


def words(s):
    w = s.split(" ")
    return [w[0]] + [" " + x for x in w[1:]]


def openai_loop(req, k):
    msgs = req["messages"]
    n = steps_openai(msgs)
    model = req.get("model") if isinstance(req.get("model"), str) \
        else "mock-model"
    ptoks = prompt_tokens(msgs)
    cid = "chatcmpl-loop-%d" % n
    if n < k:
        args = json.dumps({"a": n, "b": 1})
        call = {"id": "call_%d" % n, "type": "function",
                "function": {"name": "add", "arguments": args}}
        msg = {"role": "assistant", "content": None, "tool_calls": [call],
               "refusal": None}
        finish, ctoks = "tool_calls", 12
    else:
        text = "done after %d steps" % k
        msg = {"role": "assistant", "content": text, "refusal": None}
        finish, ctoks = "stop", 4
    usage = {"prompt_tokens": ptoks, "completion_tokens": ctoks,
             "total_tokens": ptoks + ctoks}
    if not req.get("stream"):
        return json_reply(200, {
            "id": cid, "object": "chat.completion", "created": CREATED,
            "model": model, "choices": [{"index": 0, "message": msg,
                                         "logprobs": None,
                                         "finish_reason": finish}],
            "usage": usage, "system_fingerprint": "fp_llmserver"})
    base = {"id": cid, "object": "chat.completion.chunk",
            "created": CREATED, "model": model,
            "system_fingerprint": "fp_llmserver"}

    def chunk(delta, fin=None):
        c = dict(base)
        c["choices"] = [{"index": 0, "delta": delta, "logprobs": None,
                         "finish_reason": fin}]
        return c

    if n < k:
        call = msg["tool_calls"][0]
        out = [chunk({"role": "assistant", "content": None}),
               chunk({"tool_calls": [{
                   "index": 0, "id": call["id"], "type": "function",
                   "function": {"name": "add", "arguments": ""}}]})]
        out += [chunk({"tool_calls": [{"index": 0, "function": {
            "arguments": piece}}]})
            for piece in halves(call["function"]["arguments"])]
    else:
        out = [chunk({"role": "assistant", "content": "", "refusal": None})]
        out += [chunk({"content": w}) for w in words(msg["content"])]
    out.append(chunk({}, finish))
    so = req.get("stream_options")
    if isinstance(so, dict) and so.get("include_usage"):
        u = dict(base)
        u["choices"] = []
        u["usage"] = usage
        out.append(u)
    events = [b"data: " + dumps(c) + b"\n\n" for c in out]
    events.append(b"data: [DONE]\n\n")
    return sse_reply(events)


def anthropic_loop(req, k):
    msgs = req["messages"]
    n = steps_anthropic(msgs)
    model = req.get("model") if isinstance(req.get("model"), str) \
        else "mock-model"
    itoks = prompt_tokens(msgs)
    mid = "msg_loop_%d" % n
    if n < k:
        block = {"type": "tool_use", "id": "toolu_%d" % n, "name": "add",
                 "input": {"a": n, "b": 1}}
        stop, otoks = "tool_use", 12
    else:
        block = {"type": "text", "text": "done after %d steps" % k}
        stop, otoks = "end_turn", 4
    if not req.get("stream"):
        return json_reply(200, {
            "id": mid, "type": "message", "role": "assistant",
            "model": model, "content": [block], "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": itoks, "output_tokens": otoks}})
    if block["type"] == "tool_use":
        start = dict(block, input={})
        deltas = [{"type": "input_json_delta", "partial_json": p}
                  for p in [""] + halves(json.dumps(block["input"]))]
    else:
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": w}
                  for w in words(block["text"])]
    evs = [("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": itoks, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": start}),
        ("ping", {"type": "ping"})]
    evs += [("content_block_delta", {"type": "content_block_delta",
                                     "index": 0, "delta": d})
            for d in deltas]
    evs += [("content_block_stop", {"type": "content_block_stop",
                                    "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop,
                                         "stop_sequence": None},
                               "usage": {"output_tokens": otoks}}),
            ("message_stop", {"type": "message_stop"})]
    return sse_reply([b"event: " + name.encode() + b"\ndata: " + dumps(d) +
                      b"\n\n" for name, d in evs])


def loop_reply(raw, k, tail):
    api = "/".join(tail)
    if api.endswith("chat/completions"):
        make, bad = openai_loop, lambda m: json_reply(400, {"error": {
            "message": m, "type": "invalid_request_error", "param": None,
            "code": None}})
    elif api.endswith("messages"):
        make, bad = anthropic_loop, lambda m: json_reply(400, {
            "type": "error", "error": {"type": "invalid_request_error",
                                       "message": m}})
    else:
        return None
    try:
        req = json.loads(raw.decode("utf-8"))
        if not isinstance(req, dict) or \
                not isinstance(req.get("messages"), list):
            raise BadRequest("messages: expected a list")
        return make(req, k)
    except (ValueError, BadRequest, RecursionError) as e:
        return bad("bad request body: %s" % e)


# --- the server -------------------------------------------------------------

def parse_body(raw):
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return raw.decode("utf-8", "replace")


def count(s):
    if not re.fullmatch(r"[0-9]{1,9}", s):
        raise ValueError(s)
    return int(s)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "llmserver/1"
    sys_version = ""
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def version_string(self):
        return self.server_version

    def send_error(self, code, message=None, explain=None):
        """The standard library's protocol errors, in JSON, not HTML."""
        self.close_connection = True
        body = error_body(message or reason(code), "bad_request")
        try:
            self.send_response(code, message)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass

    def do_any(self):
        self.sent = False
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError,
                ConnectionAbortedError, TimeoutError):
            self.close_connection = True
        except Exception as e:          # never take the server down
            self.close_connection = True
            if not self.sent:
                try:
                    self.emit(json_reply(500, error_body(
                        "llmserver: %s" % e, "server_error")), {})
                except OSError:
                    pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_any

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            out = b""
            while True:
                line = self.rfile.readline(1024)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n",
                                                            b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline(1024)
        n = self.headers.get("Content-Length")
        if n is None:
            return b""
        n = int(n)
        if n < 0:
            raise ValueError("negative Content-Length")
        return self.rfile.read(n)

    def request_headers(self):
        out = {}
        for k, v in self.headers.items():
            k = k.lower()
            out[k] = out[k] + ", " + v if k in out else v
        return out

    def log_request_line(self, body):
        path = self.server.log_path
        if path is None:
            return
        line = json.dumps({"method": self.command, "path": self.path,
                           "headers": self.request_headers(),
                           "body": parse_body(body),
                           "peer": self.client_address[1]})
        with self.server.log_lock, open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def answer(self):
        try:
            raw = self.read_body()
        except ValueError:
            self.close_connection = True
            return self.emit(json_reply(400, error_body(
                "bad request framing", "invalid_request_error")), {})
        self.log_request_line(raw)
        segs = [s for s in self.path.split("?", 1)[0].split("/") if s]
        mods = {}
        try:
            while len(segs) >= 2 and segs[0] in ("stall", "chunk", "drop"):
                mods[segs[0]] = count(segs[1])
                segs = segs[2:]
            reply = self.route(segs, raw)
        except ValueError:
            reply = None
        if reply is None:
            reply = json_reply(404, error_body(
                "no route for %s %s" % (self.command, self.path),
                "not_found"))
        if mods.get("stall"):
            time.sleep(mods["stall"] / 1000.0)
        self.emit(reply, mods)

    def route(self, segs, raw):
        if not segs:
            return None
        t, rest = segs[0], segs[1:]
        if t == "fixture" and len(rest) >= 2:
            return self.fixture(rest[0], rest[1])
        if t == "seq" and len(rest) >= 2:
            names = rest[1].split(",")
            key = "/".join(segs[:3])
            with self.server.log_lock:
                n = self.server.seen.get(key, 0)
                self.server.seen[key] = n + 1
            return self.fixture(rest[0], names[min(n, len(names) - 1)])
        if t == "status" and rest:
            code = count(rest[0])
            if not 200 <= code <= 599:
                return None
            if code in (204, 304):
                return Reply(code, None)
            return json_reply(code, error_body("scripted %d" % code,
                                               "scripted"))
        if t == "garbage":
            return json_reply(200, b"<html>not json</html>")
        if t == "echo":
            return json_reply(200, {"method": self.command,
                                    "path": self.path,
                                    "headers": self.request_headers(),
                                    "body": parse_body(raw)})
        if t == "loop" and rest:
            return loop_reply(raw, count(rest[0]), rest[1:])
        return None

    def fixture(self, d, name):
        root = os.path.realpath(self.server.fixtures)
        path = os.path.realpath(os.path.join(root, d, name))
        if not path.startswith(root + os.sep) or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            data = f.read()
        if name.endswith(".sse"):
            return sse_reply(split_events(data))
        if name.endswith(".json"):
            m = re.match(r"error-([0-9]{3})-", name)
            return json_reply(int(m.group(1)) if m else 200, data)
        if name.endswith(".http"):
            return Reply(0, raw=data)
        return None

    def emit(self, r, mods):
        """Writes r, as the modifiers in mods say."""
        if r.raw is not None:
            head, sep, body = r.raw.partition(b"\r\n\r\n")
            head, pieces, closing = head + sep, [body], True
        else:
            head, pieces = self.head(r), r.pieces
            closing = "drop" in mods
        if "drop" in mods:
            pieces = cut(pieces, mods["drop"])
        if "chunk" in mods and mods["chunk"] > 0:
            pieces = rechunk(pieces, mods["chunk"])
        elif not r.stream:
            pieces = [b"".join(pieces)]
        if r.stream:
            pieces = [b"%x\r\n%s\r\n" % (len(p), p) for p in pieces if p]
            if "drop" not in mods:
                pieces.append(b"0\r\n\r\n")
        self.sent = True
        self.write_pieces(head, pieces, "chunk" in mods)
        if closing:
            self.close_connection = True
            self.connection.shutdown(2)     # SHUT_RDWR: the end, now

    def head(self, r):
        lines = ["HTTP/1.1 %d %s" % (r.status, reason(r.status))]
        if r.ctype is not None:
            lines.append("Content-Type: %s" % r.ctype)
        if r.stream:
            lines += ["Cache-Control: no-cache",
                      "Transfer-Encoding: chunked"]
        elif r.status not in (204, 304):
            lines.append("Content-Length: %d" %
                         sum(len(p) for p in r.pieces))
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def write_pieces(self, head, pieces, slow):
        if not slow:
            self.wfile.write(head + b"".join(pieces))
            self.wfile.flush()
            return
        self.wfile.write(head)
        for p in pieces:
            self.wfile.flush()
            time.sleep(0.001)
            self.wfile.write(p)
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        e = sys.exc_info()[1]
        if not isinstance(e, (OSError, ValueError)):
            super().handle_error(request, client_address)


def write_port(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, path)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="scriptable test HTTP server")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--fixtures",
                    default=os.path.normpath(os.path.join(here, "..",
                                                          "fixtures")))
    ap.add_argument("--log")
    o = ap.parse_args()

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    srv = Server(("127.0.0.1", 0), Handler)
    srv.fixtures = o.fixtures
    srv.log_path = o.log
    srv.log_lock = threading.Lock()
    srv.seen = {}
    write_port(o.port_file, srv.server_address[1])
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()


if __name__ == "__main__":
    main()
