"""Progress of a fit: the monitor a learner reports each iteration to.

An estimator's ``verbose=1`` shows one live line on a terminal (iteration, objective,
duality gap, elapsed time and an estimate of the time left to reach the stopping gap,
from the gap's recent slope on a log scale), plain lines otherwise (a file, a pipe, or
inside :func:`plain_lines`, which the console scripts use so that their ``-v`` lines
stay SVM-struct's). ``verbose=0`` shows nothing. Every line is also sent to the
``logging.getLogger("svmrank")`` logger at DEBUG level.

The same monitor records validation scores (``eval_set``), stops early when asked
(``early_stopping_rounds``) and lets Ctrl-C end a fit at the best point found.
"""
import contextlib
import contextvars
import logging
import math
import sys
import time

import numpy as np

logger = logging.getLogger("svmrank")

_PLAIN = contextvars.ContextVar("svmrank_plain_lines", default=False)


@contextlib.contextmanager
def plain_lines():
    """Within this context, verbose fits print plain lines even on a terminal."""
    token = _PLAIN.set(True)
    try:
        yield
    finally:
        _PLAIN.reset(token)


def cutting_plane_line(record):
    """The cutting-plane learner's line for one iteration (its historical format)."""
    return (f"iter {record['iteration']:4d}  constraints {record.get('constraints', 0):4d}  "
            f"violation {record.get('violation', float('nan')):.6g}  objective "
            f"{record['objective']:.8g}  time {record['time']:.3f}s")


def sdca_line(record):
    """Prox-SDCA's line for one duality-gap check."""
    return (f"epoch {record['iteration']}: primal {record['objective']:.10g} dual "
            f"{record['dual']:.10g} gap {record['gap']:.3g}")


def _copy(w):
    """A copy of parameters ``w``: an array, or a tuple of arrays (None kept)."""
    if isinstance(w, tuple):
        return tuple(None if x is None else np.array(x, copy=True) for x in w)
    return np.array(w, copy=True)


def _clock(seconds):
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def time_to_target(records, target, window=5):
    """Seconds until the gap reaches ``target``, extrapolating log(gap) linearly in
    time over the last ``window`` records with a positive gap; None when the gap is not
    decreasing (or there are fewer than two such records)."""
    points = [(r["time"], r["gap"]) for r in records
              if r.get("gap") is not None and np.isfinite(r["gap"]) and r["gap"] > 0][-window:]
    if len(points) < 2 or target is None or not target > 0:
        return None
    t, g = np.array(points).T
    if g[-1] <= target:
        return 0.0
    if np.ptp(t) <= 0:
        return None
    slope = np.polyfit(t, np.log(g), 1)[0]
    if not slope < 0:
        return None
    return float((math.log(target) - math.log(g[-1])) / slope)


class Monitor:
    """What a learner reports to after each iteration.

    Parameters
    ----------
    verbose : int
        0: show nothing; 1 or more: a live line on a terminal, plain lines otherwise.
    stream : file, optional
        Where lines go (default: ``sys.stdout`` at the time of each line).
    live : bool, optional
        Force the live line (True) or plain lines (False); default: live when
        ``stream`` is a terminal and not inside :func:`plain_lines`.
    line : callable, optional
        ``line(record) -> str``, the plain line of a record (default
        :func:`cutting_plane_line`).
    evaluate : callable, optional
        ``evaluate(w) -> float``, a validation score (higher is better) stored in each
        record under ``eval_name``.
    eval_name : str
        Key of the validation score in the records.
    early_stopping_rounds : int, optional
        Ask the learner to stop when the validation score has not improved for this
        many iterations (keeping the parameters of the best score, ``best_w``).
    catch_interrupt : bool
        Whether a learner should end the fit at its best point on Ctrl-C (True) or let
        KeyboardInterrupt through (False; an outer loop such as CCCP handles it).
    plain_iterations : bool
        Whether plain lines include one per record (True) or only :meth:`message` lines
        (False: the CCCP models, whose plain lines are one per round; their
        iterations still show on the live line and in the log).
    unit : str
        What the live line counts ("iter"; Prox-SDCA's gap checks: "epoch").
    show_dual : bool
        Whether the live line shows the record's primal and dual objectives (True) or
        only the objective (False).

    Attributes
    ----------
    records : list of dict
        Every record received (the learner's history entries, with ``round`` set
        during a CCCP round and the validation score when ``evaluate`` is given).
    best_w, best_score, best_iteration, stopped_early
        The validation optimum and whether early stopping ended the fit.
    """

    def __init__(self, verbose=0, stream=None, live=None, line=None, evaluate=None,
                 eval_name="eval", early_stopping_rounds=None, catch_interrupt=True,
                 plain_iterations=True, unit="iter", show_dual=False):
        self.verbose = int(verbose)
        self.stream = stream
        self.live = live
        self.line = cutting_plane_line if line is None else line
        self.evaluate = evaluate
        self.eval_name = eval_name
        self.early_stopping_rounds = early_stopping_rounds
        self.catch_interrupt = catch_interrupt
        self.plain_iterations, self.unit, self.show_dual = plain_iterations, unit, show_dual
        self.records = []
        self.round = None
        self.best_w, self.best_score, self.best_iteration = None, -np.inf, None
        self.stopped_early = False
        self._width = 0
        self._offset = 0.0  # (time of the earlier rounds: records' time restarts each solve)
        self._start = time.perf_counter()

    def _out(self):
        return sys.stdout if self.stream is None else self.stream

    def _is_live(self):
        if self.live is not None:
            return bool(self.live)
        if _PLAIN.get():
            return False
        isatty = getattr(self._out(), "isatty", None)
        try:
            return bool(isatty and isatty())
        except (ValueError, OSError):  # (a closed stream)
            return False

    def start_round(self, k):
        """Mark the start of CCCP round ``k`` (1-based)."""
        self.round = int(k)
        if self.records:
            self._offset = self.records[-1]["elapsed"]

    def __call__(self, record, w=None, target=None):
        """Take one iteration's ``record`` (the learner's dict: iteration, time,
        objective and what else it has; kept, with ``elapsed``, ``round`` and the
        validation score added) at parameters ``w``; ``target`` is the gap at which the
        learner stops. Returns True when the learner should stop (early stopping)."""
        record["elapsed"] = self._offset + record["time"]
        if self.round is not None:
            record["round"] = self.round
        if target is not None:
            record["target"] = target
        stop = False
        if self.evaluate is not None and w is not None:
            score = float(self.evaluate(w))
            record[self.eval_name] = score
            if np.isnan(score) and self.early_stopping_rounds is not None:
                # (an undefined measure is undefined at every w: its labels make it so)
                raise ValueError(f"eval_set: {self.eval_name} is undefined (NaN), so early "
                                 "stopping has nothing to compare; the validation labels "
                                 "need a relevant and a non-relevant sample in some query")
            if score > self.best_score:
                self.best_score, self.best_w = score, _copy(w)
                self.best_iteration = len(self.records) + 1
            elif (self.early_stopping_rounds is not None
                  and len(self.records) + 1 - self.best_iteration >= self.early_stopping_rounds):
                stop = self.stopped_early = True
        self.records.append(record)
        self._show(record)
        return stop

    def _show(self, record):
        text = self.line(record)
        logger.debug(text)
        if not self.verbose:
            return
        out = self._out()
        if not self._is_live():
            if self.plain_iterations:
                print(text, file=out, flush=True)
            return
        # (within a CCCP round: the round's own iteration count)
        count = record["iteration"] if self.unit == "epoch" or self.round is not None \
            else len(self.records)
        parts = [f"{self.unit} {count}"]
        if self.round is not None:
            parts.insert(0, f"CCCP round {self.round}")
        if self.show_dual and "dual" in record:
            parts.append(f"primal {record['objective']:.6g}  dual {record['dual']:.6g}")
        else:
            parts.append(f"objective {record['objective']:.6g}")
        gap = record.get("gap")
        if gap is not None:
            parts.append(f"gap {gap:.2e}" + (f" (target {record['target']:.1e})"
                                             if record.get("target") else ""))
        if self.eval_name in record:
            parts.append(f"{self.eval_name} {record[self.eval_name]:.4f}")
        parts.append(f"elapsed {_clock(time.perf_counter() - self._start)}")
        left = time_to_target(self.records, record.get("target"))
        parts.append("ETA " + (_clock(left) if left is not None else "?"))
        text = "  ".join(parts)
        pad = max(0, self._width - len(text))
        self._width = len(text)
        out.write("\r" + text + " " * pad)
        out.flush()

    def message(self, text):
        """A line outside the iterations (a CCCP round's result, say)."""
        logger.debug(text)
        if self.verbose:
            self._end_live()
            print(text, file=self._out(), flush=True)

    def _end_live(self):
        if self._width:
            self._out().write("\n")
            self._out().flush()
            self._width = 0

    def close(self):
        """End the live line (call once the fit is over)."""
        if self.verbose:
            self._end_live()
