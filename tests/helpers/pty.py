#!/usr/bin/env python3
"""pty.py - drive a command on a pseudo-terminal, step by step.

usage: pty.py [--timeout SECS] [--log FILE] SCRIPT -- COMMAND [ARG...]

SCRIPT is a file of steps, or '-' for stdin; one step a line:
  send TEXT      type TEXT once the line editor reads (the terminal is out
                 of canonical mode: typed earlier, the kernel would echo
                 it); Python escapes work: \\r Enter, \\x03 Ctrl-C,
                 \\x04 Ctrl-D, \\t Tab, \\x1b[A up-arrow
  sendnow TEXT   type TEXT at once (Ctrl-C while a turn runs)
  expect REGEX   wait (up to the timeout) for REGEX in what the command
                 wrote since the last expect matched; the match ends there
  absent REGEX   fail if REGEX is anywhere in everything written so far
  sleep SECS     wait
  wait [STATUS]  wait for the command to exit (and check its status)
Lines that are blank or start with '#' are skipped.  Exits 0 when every
step held, 1 (with the output's tail on stderr) when one did not.
"""
import codecs
import os
import re
import select
import signal
import sys
import termios
import time


def fail(msg, out):
    tail = out[-1500:].decode("utf-8", "replace")
    sys.stderr.write("pty.py: %s\n--- output tail ---\n%s\n---\n" % (msg, tail))
    sys.exit(1)


class Child:
    def __init__(self, argv):
        self.pid, self.fd = os.forkpty()
        if self.pid == 0:
            os.environ.setdefault("TERM", "xterm")
            # A terminal's session starts with default signals.  Without
            # this a command would inherit what this script was started
            # with (SIGINT ignored, as for a job bash ran with '&') and
            # Python's own SIGPIPE ignored, and a Ctrl-C would not reach
            # a stage that keeps the default.
            try:
                for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE,
                            signal.SIGXFSZ):
                    signal.signal(sig, signal.SIG_DFL)
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        self.out = b""
        self.mark = 0
        self.status = None

    def read(self, secs):
        """Reads what is there within secs; False at end of output."""
        r, _, _ = select.select([self.fd], [], [], secs)
        if not r:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        self.out += data
        return bool(data)

    def expect(self, regex, timeout):
        rx = re.compile(regex.encode(), re.S)
        end = time.time() + timeout
        while True:
            m = rx.search(self.out, self.mark)
            if m:
                self.mark = m.end()
                return
            left = end - time.time()
            if left <= 0 or not self.read(min(left, 0.2)):
                if not rx.search(self.out, self.mark):
                    fail("expected /%s/" % regex, self.out[self.mark:])

    def editing(self, timeout):
        """Waits for the terminal to leave canonical mode (on Linux the
        master's termios are the slave's)."""
        end = time.time() + timeout
        while time.time() < end:
            if not termios.tcgetattr(self.fd)[3] & termios.ICANON:
                return
            self.read(0.02)
        fail("the line editor never read", self.out[self.mark:])

    def wait(self, timeout):
        end = time.time() + timeout
        while time.time() < end:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(st)
                while self.read(0.05):
                    pass
                return self.status
            self.read(0.05)
        fail("the command did not exit", self.out)


def main():
    args = sys.argv[1:]
    timeout, log = 15.0, None
    while args and args[0].startswith("--") and args[0] != "--":
        opt = args.pop(0)
        if opt == "--timeout":
            timeout = float(args.pop(0))
        elif opt == "--log":
            log = args.pop(0)
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__.split("\n\n")[1])
    src = sys.stdin if args[0] == "-" else open(args[0])
    steps = [l.rstrip("\n") for l in src]
    child = Child(args[2:])
    try:
        for step in steps:
            if not step.strip() or step.lstrip().startswith("#"):
                continue
            op, _, arg = step.strip().partition(" ")
            if op in ("send", "sendnow"):
                text = codecs.decode(arg, "unicode_escape").encode("latin-1")
                if op == "send":
                    child.editing(timeout)
                os.write(child.fd, text)
            elif op == "expect":
                child.expect(arg, timeout)
            elif op == "absent":
                if re.search(arg.encode(), child.out, re.S):
                    fail("did not expect /%s/" % arg, child.out)
            elif op == "sleep":
                child.read(0)
                time.sleep(float(arg))
            elif op == "wait":
                st = child.wait(timeout)
                if arg and st != int(arg):
                    fail("exit status %d, expected %s" % (st, arg), child.out)
            else:
                fail("unknown step '%s'" % step, child.out)
    finally:
        if log:
            with open(log, "wb") as f:
                f.write(child.out)
        if child.status is None:
            try:
                os.kill(child.pid, 9)
                os.waitpid(child.pid, 0)
            except OSError:
                pass


if __name__ == "__main__":
    main()
