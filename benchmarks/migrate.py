"""Cost of a migration against its anchors: the link (cross-fitted and refitted for its band) and the TOST over
cluster-bootstrap resamples at growing numbers of anchors (default 2,500, 5,000 and 10,000 with 2,000 resamples),
measured side by side in one run. The cost is linear in the anchors when each step's time grows at most as the
anchors do (×1.2 of the anchors' ratio allows for noise).

    python benchmarks/migrate.py [--anchors 2500 5000 10000] [--bootstrap 2000] [--repeat 3]
    python benchmarks/migrate.py --anchors 100 200 400 --bootstrap 100 --repeat 1     # a quick check
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchors", type=int, nargs="+", default=[2500, 5000, 10000],
                    help="numbers of anchors, ascending (default 2500 5000 10000)")
    ap.add_argument("--bootstrap", type=int, default=2000, help="cluster-bootstrap resamples (default 2000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per size; the best is kept (default 3)")
    a = ap.parse_args()
    sizes = tuple(a.anchors)
    if len(sizes) < 2 or any(n < 50 for n in sizes) or list(sizes) != sorted(set(sizes)):
        ap.error("--anchors: two or more distinct sizes of at least 50, ascending")
    if a.bootstrap < 10 or a.repeat < 1:
        ap.error("--bootstrap must be at least 10 and --repeat at least 1")
    times = [timed(n, a.bootstrap, a.repeat) for n in sizes]
    print(f"| anchors | seconds (best of {a.repeat}, {a.bootstrap} resamples) | × previous |")
    print("|---:|---:|---:|")
    for i, (n, s) in enumerate(zip(sizes, times, strict=True)):
        print(f"| {n} | {s:.2f} | {'' if i == 0 else f'{s / times[i - 1]:.2f}'} |")
    worst = max((times[i] / times[i - 1]) / (sizes[i] / sizes[i - 1]) for i in range(1, len(times)))
    print(f"largest time ratio over anchor ratio: {worst:.2f} "
          f"({'linear' if worst <= 1.2 else 'FASTER THAN LINEAR'})")


if __name__ == "__main__":
    main()
