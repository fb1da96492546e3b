#!/usr/bin/env python3
"""proctree.py - the CPU and the memory of a process and all its descendants.

usage: bench/proctree.py cpu PID...
       bench/proctree.py pss INTERVAL_MS PID...

cpu: one line, the CPU milliseconds of each PID's tree (the process and
     every live descendant, found by the parent pids in /proc/*/stat):
     utime + stime + cutime + cstime of each, so a process that has exited
     and been waited for by one of them is in its parent's figures, and
     the difference of two calls is what the tree spent between them.
     Several PIDs: one figure each, space-separated.

pss: samples the trees every INTERVAL_MS until SIGTERM or SIGINT (or until
     every PID is gone), then prints one line per PID,
     "peak_pss_kib peak_processes samples": the largest sum over the tree
     of Pss from /proc/PID/smaps_rollup in one sample, the most processes
     a sample found, and how many samples were taken.

Linux only (/proc); Python standard library only.  A process that ends
while it is being read is skipped in that sample.
"""
import os
import signal
import sys
import time

TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def stats():
    """{pid: (ppid, utime+stime+cutime+cstime ticks)} of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                raw = f.read()
        except OSError:
            continue
        # The command is in parentheses and may hold spaces or parentheses.
        rest = raw[raw.rfind(b")") + 2:].split()
        # rest[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
        out[int(name)] = (int(rest[1]), sum(int(x) for x in rest[11:15]))
    return out


def tree(root, st):
    kids = {}
    for pid, (ppid, _) in st.items():
        kids.setdefault(ppid, []).append(pid)
    todo, seen = [root], []
    while todo:
        p = todo.pop()
        if p in st:
            seen.append(p)
            todo.extend(kids.get(p, ()))
    return seen


def pss(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid, "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ("cpu", "pss"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    if argv[1] == "cpu":
        st = stats()
        print(" ".join("%.0f" % (sum(st[p][1] for p in tree(int(r), st)) * TICK_MS)
                       for r in argv[2:]))
        return 0
    interval = float(argv[2]) / 1000
    roots = [int(r) for r in argv[3:]]
    peak = dict.fromkeys(roots, 0)
    procs = dict.fromkeys(roots, 0)
    n = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while not stop:
        st = stats()
        alive = 0
        for r in roots:
            pids = tree(r, st)
            alive += bool(pids)
            peak[r] = max(peak[r], sum(pss(p) for p in pids))
            procs[r] = max(procs[r], len(pids))
        n += 1
        if not alive:
            break
        time.sleep(interval)
    for r in roots:
        print(peak[r], procs[r], n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
