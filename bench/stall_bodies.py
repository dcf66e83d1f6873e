#!/usr/bin/python3
"""Connections that stall inside large request bodies (bench/admission idle-bodies,
bench/chaos abuse): each sends the headers of a POST announcing --content-length bytes,
then --body-sent bytes of the body, and sends nothing more.

  stall_bodies.py --port=P --connections=N --hold=SECONDS [--body-sent=65536]
                  [--content-length=1048576] [--target=PATH[|TOKEN]]... [--keep]
                  [--reopen-after=1] [--pid=PID] [--hold-after=SECONDS]

Connection i comes from 127.1.(i // 250).(i % 250 + 1): a spread-out client, whom
per-client limits do not stop. --target (repeatable; connections take them in turn):
the path ("{uuid}" in it: a made-up one per connection, e.g. an app id nobody has),
and the bearer token to send ("made-up": one of its own per connection, as a flood
defeats a cache of refused tokens with; none: no Authorization header).
The default is an upload with made-up tokens. --keep: a connection the service
closes (its body timeout, a refusal) is opened again in its place --reopen-after
seconds later (a 503's Retry-After), until --hold ends, so about N stall throughout. --pid: the service's RSS is sampled every 100 ms (its peak
printed). Prints one line:

  opened=N in Ts connect_failed=F reopened=R live_min=L peak_rss_kib=K statuses=S

statuses: the first answer each connection got by the end (none: still waiting for
its body to be read; closed: closed unanswered). With --hold-after the connections are then held that long more.
"""
import argparse
import collections
import os
import random
import resource
import select
import socket
import sys
import time
import uuid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--connections", type=int, required=True)
    ap.add_argument("--hold", type=float, required=True)
    ap.add_argument("--body-sent", type=int, default=65536)
    ap.add_argument("--content-length", type=int, default=1048576)
    ap.add_argument("--target", action="append")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--reopen-after", type=float, default=1.0)
    ap.add_argument("--pid", default="")
    ap.add_argument("--hold-after", type=float, default=0)
    a = ap.parse_args()
    targets = []
    for t in a.target or ["/client/store_b/purchase_orders|made-up"]:
        path, _, token = t.partition("|")
        targets.append((path, token or "none"))

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    body = b'{"purchase_data":"' + b"x" * max(0, a.body_sent - 18)
    rng = random.Random()

    def request(i):
        path, token = targets[i % len(targets)]
        if token == "made-up":
            token = "rcpt_made_up_%032x" % rng.getrandbits(128)
        if "{uuid}" in path:
            path = path.replace("{uuid}", str(uuid.UUID(int=rng.getrandbits(128), version=4)))
        auth = "" if token == "none" else "Authorization: Bearer %s\r\n" % token
        return ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % (path, auth, a.content_length)).encode() + body

    def rss():
        try:
            with open("/proc/%s/status" % a.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    poller = select.poll()
    slot_of = {}  # fd -> (slot, socket)
    got = {}  # fd -> bytes received (the first answer's status line is enough)
    counts = {}
    connect_failed = reopened = 0

    def open_slot(i):
        nonlocal connect_failed
        s = socket.socket()
        try:
            s.bind(("127.1.%d.%d" % (i // 250 % 256, i % 250 + 1), 0))
            s.connect(("127.0.0.1", a.port))
            s.sendall(request(i))
        except OSError:
            connect_failed += 1
            s.close()
            return False
        s.setblocking(False)
        slot_of[s.fileno()] = (i, s)
        got[s.fileno()] = b""
        poller.register(s, select.POLLIN)
        return True

    def count(data, closed):
        status = data[9:12].decode() if data.startswith(b"HTTP/1.1 ") else (
            "closed" if closed else "none")
        counts[status] = counts.get(status, 0) + 1

    start = time.time()
    opened = sum(1 for i in range(a.connections) if open_slot(i))
    opened_in = time.time() - start
    end = time.time() + a.hold
    peak = rss() if a.pid else 0
    live_min = len(slot_of)
    closed = collections.deque()  # (when, slot) to reopen, oldest first
    while time.time() < end:
        for fd, ev in poller.poll(100):
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if data:
                got[fd] += data[: max(0, 16 - len(got[fd]))]
                continue
            i, s = slot_of.pop(fd)
            poller.unregister(fd)
            count(got.pop(fd), True)
            s.close()
            closed.append((time.time() + a.reopen_after, i))
        if a.keep:
            while closed and closed[0][0] <= time.time() < end:
                if open_slot(closed.popleft()[1]):
                    reopened += 1
        live_min = min(live_min, len(slot_of))
        if a.pid:
            peak = max(peak, rss())
    for data in got.values():
        count(data, False)
    print("opened=%d in %.1fs connect_failed=%d reopened=%d live_min=%d peak_rss_kib=%d "
          "statuses=%s" % (opened, opened_in, connect_failed, reopened, live_min, peak,
                           ",".join("%s:%d" % kv for kv in sorted(counts.items()))))
    sys.stdout.flush()
    time.sleep(a.hold_after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
