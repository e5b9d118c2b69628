"""Whether two `tessera train` runs logged the same losses step by step (data-parallel runs
against the one-process run): compare_losses.py ONE/log.json OTHER/log.json STEPS LABEL.
Prints the largest relative difference; exits 1 above 1e-4 or when the step counts differ."""
import json
import sys

one, other, steps, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
a = [r["loss"] for r in json.load(open(one))["log"]]
b = [r["loss"] for r in json.load(open(other))["log"]]
if not len(a) == len(b) == steps:
    print("%s: %d and %d losses, expected %d" % (label, len(a), len(b), steps))
    sys.exit(1)
worst = max(abs(x - y) / abs(x) for x, y in zip(a, b))
print("%s: %d losses, largest relative difference %.2e" % (label, steps, worst))
sys.exit(0 if worst < 1e-4 else 1)
