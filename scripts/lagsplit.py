#!/usr/bin/env python3
"""lagsplit.py [DIR] — what is a real classic member's notice → rejoin lag made of?
(docs/CALIBRATE.md, "Why is the simulated rebalance shorter than the real one?")

For every committed repetition under DIR/real (default results/calibration/real)
and every classic member with a rebalance notice ("Request joining group due
to: …") followed by its "(Re-)joining group" (sent after onJoinPrepare's
commit and revocation), rebuild the member's processing steps from its driver
seed (meta.json driver_seeds): realkafka/java/Driver.java sleeps
poll.interval after every poll() that returned records, drawn with
java.util.Random.nextGaussian as Dist.draw's lognormal; the suite's default
workload (poll.interval lognormal 200 ms / p99 2 s; poll.timeout and
callback.time constants, which draw nothing). The steps are laid end to end
from the member's first_records event, with a per-poll cost delta (0–4 ms,
fitted per member); the step in progress at the notice is the one whose end
lands within 25 ms of the "(Re-)joining group" line. Only members with no
ownership change between first_records and the notice are rebuilt (a
rebalance in between moves the steps; cooperative members keep polling).

Prints per version: the lag, the remaining step at the notice and the rest
(the commit round trip, the revocation callback, the JoinGroup's send), the
remaining step a uniformly random notice instant would meet in the same
member's 61 steps around it (so: were the real notices unlucky?), and the
fitted per-poll cost. Read-only; python3 standard library only.
"""
import glob
import json
import math
import os
import re
import statistics as st
import sys
import tarfile

MASK = (1 << 48) - 1


class JavaRandom:
    """java.util.Random: the 48-bit LCG and nextGaussian's polar method."""

    def __init__(self, seed):
        self.seed = (seed ^ 0x5DEECE66D) & MASK
        self.have = False
        self.nng = 0.0

    def next(self, bits):
        self.seed = (self.seed * 0x5DEECE66D + 0xB) & MASK
        return self.seed >> (48 - bits)

    def next_double(self):
        return ((self.next(26) << 27) + self.next(27)) * (1.0 / (1 << 53))

    def next_gaussian(self):
        if self.have:
            self.have = False
            return self.nng
        while True:
            v1, v2 = 2 * self.next_double() - 1, 2 * self.next_double() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                break
        mul = math.sqrt(-2 * math.log(s) / s)
        self.nng, self.have = v2 * mul, True
        return v1 * mul


def steps(seed, n, median=200.0, p99=2000.0):
    """Driver.Dist.draw("lognormal:median:p99"), n times."""
    r, sigma = JavaRandom(seed), math.log(p99 / median) / 2.3263478740408408
    return [int(median * math.exp(sigma * r.next_gaussian())) for _ in range(n)]


TS = re.compile(r"^(\d{13}) ")


def members_of(tf):
    logs, events = {}, {}
    for m in tf.getmembers():
        if not m.isfile() or not m.name.startswith("members/"):
            continue
        base = os.path.basename(m.name)
        text = tf.extractfile(m).read().decode("utf-8", "replace").splitlines()
        if base.endswith(".events.jsonl"):
            events[base[: -len(".events.jsonl")]] = [json.loads(l) for l in text if l.startswith("{")]
        elif base.endswith(".log"):
            logs[base[: -len(".log")]] = text
    return logs, events


def notices(lines):
    """(notice, rejoin) epoch-ms pairs: a notice line, then the next rejoin."""
    out, pending = [], None
    for l in lines:
        m = TS.match(l)
        if not m:
            continue
        t = int(m.group(1))
        if pending is None and "Request joining group due to" in l:
            pending = t
        elif pending is not None and "(Re-)joining group" in l:
            out.append((pending, t))
            pending = None
    return out


def rebuild(draws, start, notice, rejoin):
    best = None
    for q in range(17):
        delta, t, k = q * 0.25, start, 0
        while k < len(draws) - 1 and t + draws[k] + delta < notice:
            t += draws[k] + delta
            k += 1
        end = t + draws[k] + delta
        cand = (abs(rejoin - end), delta, k, end)
        if best is None or cand < best:
            best = cand
    err, delta, k, end = best
    if err > 25:
        return None
    bounds, t = [], start
    for i in range(min(k + 31, len(draws))):
        bounds.append((t, t + draws[i]))
        t += draws[i] + delta
    win = bounds[max(0, k - 30):]
    total = sum(b - a for a, b in win)
    expected = sum((b - a) ** 2 / 2 for a, b in win) / total
    over2 = sum(max(0, b - a - 2000) for a, b in win) / total
    return dict(lag=rejoin - notice, rem=end - notice, rest=rejoin - end, exp=expected, over2=over2, delta=delta)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results/calibration/real"
    res = {}
    for d in sorted(glob.glob(os.path.join(root, "*", "kafka-*", "rep-*"))):
        if not os.path.exists(os.path.join(d, "done")):
            continue
        ver = d.split(os.sep)[-2][len("kafka-"):]
        meta = json.load(open(os.path.join(d, "meta.json")))
        seeds = meta.get("driver_seeds", {})
        logs, events = members_of(tarfile.open(os.path.join(d, "logs.tar.gz")))
        r = res.setdefault(ver, {"fit": [], "nofit": 0, "skipped": 0})
        for name, lines in sorted(logs.items()):
            member, inc = name.rsplit(".", 1)
            ev = events.get(member, [])
            pids = list(dict.fromkeys(e["pid"] for e in ev))  # incarnation k is the k-th process
            if not inc.isdigit() or int(inc) > len(pids):
                continue
            ev = [e for e in ev if e["pid"] == pids[int(inc) - 1]]
            first = [e["ts_ms"] for e in ev if e["event"] == "first_records"]
            for notice, rejoin in notices(lines):
                if not first or notice < first[0]:
                    continue
                moved = [e for e in ev if e["event"].startswith("partitions_") and first[0] < e["ts_ms"] < notice]
                if moved or name not in seeds:
                    r["skipped"] += 1
                    break
                x = rebuild(steps(seeds[name], 4000), first[0], notice, rejoin)
                if x is None:
                    r["nofit"] += 1
                else:
                    r["fit"].append(x)
                break  # a member's first notice after its first records only
    for ver in sorted(res):
        r, f = res[ver], res[ver]["fit"]
        if not f:
            continue
        print("%s: %d notices rebuilt from the driver seeds (%d not fitted, %d skipped)" % (ver, len(f), r["nofit"], r["skipped"]))
        for k, what in (("lag", "notice -> (Re-)joining group"), ("rem", "  remaining step at the notice"),
                        ("rest", "  the rest (commit, revocation, send)"),
                        ("exp", "remaining step at a random instant, same steps"), ("delta", "fitted per-poll cost")):
            v = [x[k] for x in f]
            print("  %-48s mean %7.1f ms  median %7.1f ms" % (what, st.mean(v), st.median(v)))
        print("  P(remaining step > 2 s): %.3f at the notices, %.3f at a random instant" % (
            st.mean([x["rem"] > 2000 for x in f]), st.mean([x["over2"] for x in f])))


main()
