#!/usr/bin/env python3
"""hbphase.py [REP_DIR ...] — do a real classic group's heartbeats stay
phase-aligned? (issue 26; docs/CALIBRATE.md, "Do real heartbeats stay
phase-aligned?")

Reads the committed real repetitions (default: every
results/calibration/real/*/kafka-*/rep-*/logs.tar.gz) and prints one row per
repetition, group and generation with at least two members heartbeating in
it, then a summary:

  t_hb1   each member's first heartbeat of the generation ("Sending Heartbeat
          request with generation G") minus the broker's "Stabilized group G
          generation N" (the JoinGroup responses go out then): min..max
  spread1 max-min of the members' first heartbeats (ms), sd1 their sd
  spreadK max-min of the members' K-th heartbeats (K = 4, 11: ~10 s, ~30 s
          later) over the members still in their run of regular heartbeats
          (cut at a gap outside 2.5-3.5 s: crash, pause, partition) while
          at least half the group is; the last such K (spreadL, at +tL s)
  sync    first heartbeat minus the member's own "Successfully synced group"
  lead    the leader's first heartbeat minus the followers' mean (ms)
  load    loadavg_start (1 min) of summary.json

Read-only; python3 standard library only.
"""
import glob
import json
import math
import os
import re
import statistics
import sys
import tarfile
from datetime import datetime, timezone

HB = re.compile(r"^(\d{13}) DEBUG .*groupId=([^\]]+)\] Sending Heartbeat request with generation (\d+) and member id (\S+)")
SYNC = re.compile(r"^(\d{13}) INFO .*groupId=([^\]]+)\] Successfully synced group in generation Generation\{generationId=(\d+), memberId='([^']+)'")
STAB = re.compile(r"Stabilized group (\S+) generation (\d+)")
LEADER = re.compile(r"Assignment received from leader (\S+) for group (\S+) for generation (\d+)")


def broker_ms(line):
    if line[:13].isdigit():
        return int(line[:13])
    t = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1000)


def read_rep(path):
    hbs, syncs, stab, leader = {}, {}, {}, {}
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            if not m.isfile() or not m.name.endswith(".log"):
                continue
            for line in tar.extractfile(m).read().decode("utf-8", "replace").splitlines():
                if "/brokers/" in "/" + m.name or m.name.startswith("brokers"):
                    s = STAB.search(line)
                    if s:
                        stab.setdefault((s[1], int(s[2])), broker_ms(line))
                    s = LEADER.search(line)
                    if s:
                        leader[(s[2], int(s[3]))] = s[1]
                    continue
                h = HB.match(line)
                if h:
                    hbs.setdefault((h[2], int(h[3])), {}).setdefault(h[4], []).append(int(h[1]))
                    continue
                s = SYNC.match(line)
                if s:
                    syncs[(s[2], int(s[3]), s[4])] = int(s[1])
    return hbs, syncs, stab, leader


def cut(ts):
    for i in range(1, len(ts)):
        if not 2500 <= ts[i] - ts[i - 1] <= 3500:
            return ts[:i]
    return ts


def spread(xs):
    return max(xs) - min(xs)


def main(dirs):
    rows = []
    print("rep\tgroup\tgen\tn\tload\tt_hb1\tspread1\tsd1\tspread4\tspread11\tspreadL\ttL\tsync\tlead")
    for d in dirs:
        tgz = os.path.join(d, "logs.tar.gz")
        if not os.path.exists(tgz):
            continue
        with open(os.path.join(d, "summary.json")) as f:
            real = json.load(f).get("real", {})
        load = float(real.get("loadavg_start", "nan").split()[0])
        hbs, syncs, stab, leader = read_rep(tgz)
        for (g, gen), members in sorted(hbs.items()):
            if len(members) < 2:
                continue
            seqs = {mid: sorted(ts) for mid, ts in members.items()}
            first = [ts[0] for ts in seqs.values()]
            # Later heartbeats: each member's run of regular heartbeats (cut
            # at the first gap outside 2.5-3.5 s: a crash, pause, partition
            # or lost heartbeat), compared while at least two members and
            # half the group are still in theirs.
            runs = [cut(ts) for ts in seqs.values()]
            need = max(2, (len(runs) + 1) // 2)
            at = lambda k: [r[k - 1] for r in runs if len(r) >= k] if sum(len(r) >= k for r in runs) >= need else None
            kl = max(k for k in range(1, max(map(len, runs)) + 1) if at(k))
            t0 = stab.get((g, gen))
            thb = [x - t0 for x in first] if t0 else []
            sync = [seqs[mid][0] - syncs[(g, gen, mid)] for mid in seqs if (g, gen, mid) in syncs]
            lead = ""
            ld = leader.get((g, gen))
            if ld in seqs and len(seqs) > 1:
                fol = [seqs[mid][0] for mid in seqs if mid != ld]
                lead = "%.0f" % (seqs[ld][0] - statistics.mean(fol))
            anchor = []
            for mid, ts in seqs.items():
                gaps = [b - a for a, b in zip(ts, ts[1:6]) if 2900 < b - a < 3200]
                sy = syncs.get((g, gen, mid))
                if t0 and sy and len(gaps) >= 2:
                    step = statistics.median(gaps) / 30
                    grid = lambda a: a + math.ceil((t0 + 3000 - a) / step) * step
                    anchor.append((ts[0] - grid(t0), ts[0] - grid(sy)))
            meds = [statistics.median(b - a for a, b in zip(r, r[1:])) for r in runs if len(r) >= 4]
            gapsd = statistics.pstdev(meds) if len(meds) >= 2 else None
            synced = [syncs[(g, gen, mid)] - t0 for mid in seqs if t0 and (g, gen, mid) in syncs]
            row = dict(rep=d.split("real/")[-1], anchor=anchor, synced=synced, gapsd=gapsd, g=g, gen=gen, n=len(seqs), load=load,
                       spread1=spread(first), sd1=statistics.pstdev(first),
                       s4=spread(at(4)) if at(4) else None, s11=spread(at(11)) if at(11) else None,
                       sL=spread(at(kl)), tL=(min(at(kl)) - min(first)) / 1000, kl=kl, thb=thb, sync=sync, lead=lead)
            rows.append(row)
            fmt = lambda v: "" if v is None else "%.0f" % v
            print("\t".join([row["rep"], g, str(gen), str(row["n"]), "%.2f" % load,
                             "%d..%d" % (min(thb), max(thb)) if thb else "",
                             fmt(row["spread1"]), "%.0f" % row["sd1"], fmt(row["s4"]), fmt(row["s11"]),
                             fmt(row["sL"]), "%.0f" % row["tL"],
                             "%d..%d" % (min(sync), max(sync)) if sync else "", lead]))
    summarize(rows)


def stat(name, xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    print("  %-42s n=%3d median %6.1f  p25 %6.1f  p75 %6.1f  min %6.1f  max %6.1f" % (name, len(xs), q[1], q[0], q[2], min(xs), max(xs)))


def summarize(rows):
    # Eager and static groups only (a cooperative generation's members join
    # it at different rebalances, static members keep their generation), the
    # first generation (cold JVMs) apart from the later ones.
    print()
    plain = [r for r in rows if not any(x in r["rep"] for x in ("coop", "static", "migration"))]
    for gname, gsel in (("generation 1", lambda r: r["gen"] == 1), ("later generations", lambda r: r["gen"] > 1)):
        for lo, hi in ((0, 3), (3, 8), (8, 1e9)):
            sel = [r for r in plain if gsel(r) and lo <= r["load"] < hi]
            if not sel:
                continue
            print("%s, load %g..%g: %d generations" % (gname, lo, hi, len(sel)))
            stat("spread of 1st heartbeats (ms)", [r["spread1"] for r in sel])
            stat("sd of 1st heartbeats (ms)", [r["sd1"] for r in sel])
            stat("spread of 4th heartbeats (ms)", [r["s4"] for r in sel])
            stat("spread of 11th heartbeats (ms)", [r["s11"] for r in sel])
            stat("sd of the members' median gaps (ms)", [r["gapsd"] for r in sel])
            stat("growth 1st->last, per 10 s (ms)", [(r["sL"] - r["spread1"]) * 10 / r["tL"] for r in sel if r["tL"] >= 9])
            stat("1st heartbeat - Stabilized (ms)", [x for r in sel for x in r["thb"]])
            stat("1st heartbeat - own sync (ms)", [x for r in sel for x in r["sync"]])
            stat("own sync - Stabilized (ms)", [x for r in sel for x in r["synced"]])
            stat("leader - followers' mean (ms)", [float(r["lead"]) for r in sel if r["lead"]])
            # Where the grid is anchored: each member's step is its own
            # median regular gap / 30 (retry.backoff.ms 100 + the wait's
            # overshoot); its first heartbeat minus the first grid point at
            # or after Stabilized + 3000 ms, the grid run from Stabilized
            # (the JoinGroup response: the model before) or from its own
            # "Successfully synced group" (the application thread's network
            # poll returned with the SyncGroup response: the model now).
            stat("1st hb - grid from the JoinGroup response", [x[0] for r in sel for x in r["anchor"]])
            stat("1st hb - grid from the SyncGroup response", [x[1] for r in sel for x in r["anchor"]])


if __name__ == "__main__":
    args = sys.argv[1:] or sorted(glob.glob("results/calibration/real/*/kafka-*/rep-*"))
    main(args)
