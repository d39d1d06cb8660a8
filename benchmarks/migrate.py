"""Cost of a migration against its anchors: the link (cross-fitted and refitted for its band) and the TOST over
2,000 cluster-bootstrap resamples at 2,500, 5,000 and 10,000 anchors, measured side by side in one run. The cost
is linear in the anchors when each doubling of the anchors at most doubles the time (×2.4 allows for noise).

    python benchmarks/migrate.py [--bootstrap 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from judgeaudit.analyses.migrate import migrate
from judgeaudit.analyses.migrate import simulate as sm

NINE = {"kind": "integer", "min": 1, "max": 9, "higher": "better"}
TEN = {"kind": "integer", "min": 1, "max": 10, "higher": "better"}


def timed(n: int, n_boot: int, repeat: int) -> float:
    t = sm.transformed(n, 0)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        migrate(t, old_scale=NINE, new_scale=TEN, n_boot=n_boot, with_link=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sizes = (2500, 5000, 10000)
    times = [timed(n, a.bootstrap, a.repeat) for n in sizes]
    print(f"| anchors | seconds (best of {a.repeat}, {a.bootstrap} resamples) | × previous |")
    print("|---:|---:|---:|")
    for i, (n, s) in enumerate(zip(sizes, times, strict=True)):
        print(f"| {n} | {s:.2f} | {'' if i == 0 else f'{s / times[i - 1]:.2f}'} |")
    worst = max(times[i] / times[i - 1] for i in range(1, len(times)))
    print(f"largest ratio per doubling: {worst:.2f} ({'linear' if worst <= 2.4 else 'FASTER THAN LINEAR'})")


if __name__ == "__main__":
    main()
