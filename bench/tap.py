#!/usr/bin/env python3
"""tap.py OUT - copy stdin to stdout a line at a time, counting.

One stage of bench/compare.sh's untimed ring: it sits on one of the
ring's pipes, passes every line on at once (the ring is a conversation,
so nothing may wait in a buffer), and at end of input writes to OUT one
JSON object: {"bytes", "lines", "max_line", "types": {TYPE: {"lines",
"bytes", "max"}}}, TYPE being the line's "type" member.
"""
import json
import re
import sys

LEAD = re.compile(rb'"type"\s*:\s*"([^"\\]*)"')


def kind(line):
    m = LEAD.search(line, 0, 256)
    if m and line.lstrip().startswith(b'{"type"'):
        return m.group(1).decode()
    try:
        return str(json.loads(line).get("type"))
    except (ValueError, AttributeError):
        return "?"


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        out = sys.stdout if sys.argv[1:] in (["-h"], ["--help"]) else sys.stderr
        out.write(__doc__)
        sys.exit(0 if out is sys.stdout else 2)
    total = lines = longest = 0
    types = {}
    src, dst = sys.stdin.buffer, sys.stdout.buffer
    try:
        for line in src:
            n = len(line)
            total += n
            lines += 1
            longest = max(longest, n)
            t = types.setdefault(kind(line), {"lines": 0, "bytes": 0, "max": 0})
            t["lines"] += 1
            t["bytes"] += n
            t["max"] = max(t["max"], n)
            dst.write(line)
            dst.flush()
    except BrokenPipeError:
        pass
    finally:
        with open(sys.argv[1], "w") as f:
            json.dump({"bytes": total, "lines": lines, "max_line": longest, "types": types}, f)


if __name__ == "__main__":
    main()
