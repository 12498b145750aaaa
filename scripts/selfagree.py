#!/usr/bin/env python3
"""selfagree.py [DIR] — how often would a perfect model pass the calibration's
timing rule with this many repetitions? (docs/CALIBRATE.md, "How much agreement
is possible")

For every judged timing row of DIR/calibration.csv (default
results/calibration), take the row's simulated values from DIR/values.csv,
draw 5 of them as a pseudo-real side and keep the rest as the simulated side
(the simulator against itself: the same model, the same matching), and apply
the issue's rule (|simulated mean - real mean| <= max(10 % of the real mean,
300 ms)); 400 seeded splits per row. Prints the mean pass rate per Kafka
version: the agreement a model with no error at all would reach, given the
run-to-run spread of each figure. Also prints, over the failing splits, how
often the simulated side's mean is BELOW the pseudo-real one: the sign a
perfect model's disagreements would have (a right-skewed figure, such as one a
long processing step decides, fails mostly when its 5 real values drew a long
step: real above simulated). Read-only; python3 standard library only.
"""
import collections
import csv
import os
import random
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "results/calibration"
verdict = {}
for r in csv.DictReader(open(os.path.join(d, "calibration.csv"))):
    verdict[(r["scenario"], r["kafka"], r["figure"])] = (r["class"], r["verdict"])
sim = collections.defaultdict(list)
for r in csv.DictReader(open(os.path.join(d, "values.csv"))):
    if r["side"] == "simulated" and r["value"] != "":
        sim[(r["scenario"], r["kafka"], r["figure"])].append(float(r["value"]))
REAL, SPLITS = 5, 400
rng = random.Random(1)
rates = collections.defaultdict(list)
below = collections.defaultdict(lambda: [0, 0])  # failing splits: [sim below real, all]
for k in sorted(sim):
    vs = sim[k]
    cls, v = verdict.get(k, (None, None))
    if cls != "timing" or v is None or v.startswith("pending") or len(vs) < 2 * REAL:
        continue
    ok = 0
    for _ in range(SPLITS):
        s = vs[:]
        rng.shuffle(s)
        real, simulated = s[:REAL], s[REAL:]
        mr, ms = sum(real) / len(real), sum(simulated) / len(simulated)
        passed = abs(ms - mr) <= max(0.1 * abs(mr), 300)
        ok += passed
        if not passed:
            for key in (k[1], "all"):
                below[key][0] += ms < mr
                below[key][1] += 1
    rates[k[1]].append(ok / SPLITS)
    rates["all"].append(ok / SPLITS)
for v in sorted(rates):
    xs = rates[v]
    b, n = below[v]
    print("%-6s %3d timing rows: a perfect model agrees on %.0f %% of them; of its disagreements %.0f %% have the simulated mean below the real one" % (v, len(xs), 100 * sum(xs) / len(xs), 100 * b / max(n, 1)))
