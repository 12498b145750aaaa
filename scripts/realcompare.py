#!/usr/bin/env python3
"""realcompare.py SIMRUN DIR... [--seeds N] -- a `simrun real` result beside `simrun run`.

Each DIR is one `simrun real --out DIR` directory (rep-001, rep-002, ...). For each, the
real repetitions' figures are printed beside the simulator's over seeds 1..N (default 20),
run on the same scenario with the broker's and the clients' Kafka lines as the profiles
(coordinator.profile=kafka-X.Y from meta.json's broker_version, each group's
client.profile from client_versions). Every figure is taken from the two summaries the
same way (the JSON of `simrun run --json`, which the converter also writes):
  fault_to_rebalance_ms  first rebalance starting at or after first_fault_ms, its start - fault
  fault_rebalance_ms     that rebalance's duration_ms
  settled_after_fault_ms the last rebalance's end - fault (the group settled for good)
  failover_recovery_ms   the first coordinator failover's recovery_ms
A setting the real run dropped (--drop-unsupported) is said; a dropped network.latency
distribution is run as the testbed's veth latency (50 us one way) on the simulated side too.
  the counts and partition-seconds as the summary has them.
Prints a Markdown table per DIR, and the wall time of each real repetition (meta.json).
"""
import json
import os
import statistics as st
import subprocess
import sys

FIGS = ["fault_to_rebalance_ms", "fault_rebalance_ms", "settled_after_fault_ms",
        "failover_recovery_ms", "coordinator_dead_marks", "false_coordinator_dead_marks",
        "evictions", "false_evictions", "leaves", "fences", "generations",
        "partitions_moved_after_first_fault", "unowned_partition_seconds_after_first_fault",
        "double_owned_partition_seconds"]
COUNTS = FIGS[4:]


def figures(summary):
    out = {}
    for g in summary["groups"]:
        f = g.get("first_fault_ms")
        after = [r for r in g.get("rebalances", []) if f is not None and r["start_ms"] >= f]
        v = {}
        if after:
            v["fault_to_rebalance_ms"] = after[0]["start_ms"] - f
            v["fault_rebalance_ms"] = after[0]["duration_ms"]
            v["settled_after_fault_ms"] = after[-1]["end_ms"] - f
        if g.get("failovers"):
            v["failover_recovery_ms"] = g["failovers"][0]["recovery_ms"]
        for k in COUNTS:
            if k in g:
                v[k] = g[k]
        out[g["id"]] = v
    return out


def line(version):
    return "kafka-" + ".".join(version.split(".")[:2])


def ci95(xs):
    if len(xs) < 2:
        return ""
    # the normal approximation of the mean's 95 % interval, clipped at 0:
    # every figure here is a duration, a count or partition-seconds
    h = 1.96 * st.stdev(xs) / len(xs) ** 0.5
    return " [%s, %s]" % (fmt(max(st.mean(xs) - h, 0)), fmt(st.mean(xs) + h))


def fmt(x):
    return "%.0f" % x if abs(x) >= 100 else "%.3g" % x


def main(argv):
    seeds = 20
    if "--seeds" in argv:
        i = argv.index("--seeds")
        seeds = int(argv[i + 1])
        del argv[i:i + 2]
    simrun, dirs = argv[0], argv[1:]
    for d in dirs:
        reps = sorted(r for r in os.listdir(d) if r.startswith("rep-") and os.path.exists(os.path.join(d, r, "done")))
        if not reps:
            print("%s: no finished repetition" % d)
            continue
        meta = json.load(open(os.path.join(d, reps[0], "meta.json")))
        real = [figures(json.load(open(os.path.join(d, r, "summary.json")))) for r in reps]
        walls = [json.load(open(os.path.join(d, r, "meta.json"))).get("wall_ms", 0) / 1000 for r in reps]
        sets = ["--set", "coordinator.profile=" + line(meta["broker_version"])]
        dropped = json.load(open(os.path.join(d, reps[0], "summary.json")))["real"].get("dropped") or []
        if any(x.startswith("network.latency") for x in dropped):
            # run with --drop-unsupported: the real network was the testbed's veth
            # (realkafka.VethOneWay), so the simulated side runs on it too
            sets += ["--set", "network.latency=50us"]
        for i, g in enumerate(meta["groups"]):
            sets += ["--set", "groups[%d].client.profile=%s" % (i, line(meta["client_versions"][g["id"]]))]
        sim = []
        for s in range(1, seeds + 1):
            p = subprocess.run([simrun, "run", meta["scenario"], "--seed", str(s), "--json"] + sets,
                               capture_output=True, text=True)
            if p.returncode not in (0, 1):
                sys.exit("%s: simrun run failed: %s" % (d, p.stderr.strip()))
            sim.append(figures(json.loads(p.stdout)))
        clients = ", ".join("%s %s" % (k, v) for k, v in sorted(meta["client_versions"].items()))
        print("### %s: broker %s, clients %s\n" % (meta["scenario"], meta["broker_version"], clients))
        print("Real: %d repetition(s), wall time %s s each%s. Simulated: `simrun run %s` seeds 1-%d, %s.\n"
              % (len(reps), " / ".join("%.0f" % w for w in walls),
                 "".join("; dropped: " + x for x in dropped), meta["scenario"], seeds, " ".join(sets)))
        print("| group | figure | real (each repetition) | real mean | simulated mean [95 %] |")
        print("|---|---|---|---:|---:|")
        for g in meta["groups"]:
            gid = g["id"]
            for k in FIGS:
                rv = [r[gid][k] for r in real if k in r.get(gid, {})]
                sv = [x[gid][k] for x in sim if k in x.get(gid, {})]
                if not rv and not sv:
                    continue
                print("| %s | %s | %s | %s | %s |" % (
                    gid, k, " / ".join(fmt(x) for x in rv) or "—",
                    fmt(st.mean(rv)) if rv else "—",
                    (fmt(st.mean(sv)) + ci95(sv) + ("" if len(sv) == seeds else " (%d seeds)" % len(sv))) if sv else "—"))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
