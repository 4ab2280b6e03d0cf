"""Speed of the loss-augmented inference family for AP against the number of samples.

Reproduces Mohapatra et al. 2018, Fig. 2 (time of AP inference by Yue et al.'s greedy
method against the quicksort-flavoured one as the sample set grows) with the 2014
paper's search and selection methods (Mohapatra et al. 2014, Tables 2-3) beside them,
on random scores with 5% positives. The figure's second panel is the 2014 paper's
interleaving picture for one inference call: the optimal interleaving rank of each
negative against its rank by score, non-increasing (2014 Fig. 1, one row;
2018 Fig. 1).

    python examples/lai_speed.py [--quick] [--figure lai_speed.png]
"""
import time

import numpy as np

from example_data import parser, run, save, table
from svmrank.inference import loss_augmented_inference
from svmrank.plot import interleaving, new_figure

METHODS = ("greedy", "qs", "search", "select", "search+select")


def best_time(scores, labels, method, repeats):
    """Fastest of ``repeats`` inference calls, in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        loss_augmented_inference(scores, labels, loss="ap", method=method)
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    sizes = (1000, 4000) if args.quick else (1000, 4000, 16000, 64000, 256000)
    repeats = 2 if args.quick else 5
    rng = np.random.default_rng(args.seed)
    rows, times = [], {m: [] for m in METHODS}
    for n in sizes:
        labels = (rng.random(n) < 0.05).astype(np.float64)
        labels[0], labels[1] = 1.0, 0.0  # (a positive and a negative at least)
        scores = rng.normal(size=n) + labels  # positives score higher on average
        for m in METHODS:
            times[m].append(best_time(scores, labels, m, repeats))
        rows.append([n, int(labels.sum())] + [f"{times[m][-1]:.2f}" for m in METHODS])
    print("AP loss-augmented inference, milliseconds per call (best of "
          f"{repeats}; random scores, 5% positives)")
    table(rows, ["n", "|P|"] + list(METHODS))
    figure = new_figure((10, 4))
    ax = figure.add_subplot(1, 2, 1)
    for m in METHODS:
        ax.loglog(sizes, times[m], marker="o", label=m)
    ax.set_xlabel("samples n")
    ax.set_ylabel("time per call (ms)")
    ax.legend()
    n = 300
    labels = (rng.random(n) < 0.1).astype(np.float64)
    labels[0], labels[1] = 1.0, 0.0
    interleaving(rng.normal(size=n) + 2 * labels, labels, ax=figure.add_subplot(1, 2, 2))
    save(figure, args, __file__)


if __name__ == "__main__":
    run(main)
