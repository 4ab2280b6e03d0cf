"""What every console script shares: SVM-struct style option parsing, one-line errors
and exit codes."""
import argparse
import asyncio
import codecs
import concurrent.futures
import contextlib
import contextvars
import logging
import os
import re
import sys
import time
import warnings

import numpy as np

from ..exceptions import InputFormatError
from ..io.atomic import check_writable
from ..learners.qp import QPError
from ..parallel import set_threads


def _echo_bytes(error):
    """Encoding error handler: a file name's undecodable bytes (lone surrogates from
    ``os.fsdecode``) are written back as those bytes, as SVM-struct's tools echo them;
    other characters the stream cannot encode are backslash escapes."""
    if isinstance(error, UnicodeEncodeError):
        text = error.object[error.start:error.end]
        if all("\udc80" <= c <= "\udcff" for c in text):
            return bytes(ord(c) - 0xDC00 for c in text), error.end
    return codecs.backslashreplace_errors(error)


_ECHO_BYTES = "svmrank.echo_bytes"
codecs.register_error(_ECHO_BYTES, _echo_bytes)


class CLIError(Exception):
    """A usage error: printed as one line, exit status 2."""


# the numbers C's atof/atol read the same way: Python's float() and int() also take
# 1_000 and non-ASCII digits, which SVM-struct would read as another number
_FLOAT = re.compile(r"[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)",
                    re.ASCII | re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+", re.ASCII)


def strict_float(text):
    """float() of a plain decimal number (ValueError otherwise)."""
    if not _FLOAT.fullmatch(text.strip()):
        raise ValueError(f"not a decimal number: {text!r}")
    return float(text)


def strict_int(text):
    """int() of a plain decimal integer (ValueError otherwise)."""
    if not _INT.fullmatch(text.strip()):
        raise ValueError(f"not a decimal integer: {text!r}")
    return int(text)


class StructArgumentParser(argparse.ArgumentParser):
    """argparse with SVM-struct's single-letter options (``-c 1``, ``-#``, ``--b``) and
    errors raised as :class:`CLIError` instead of printing the usage block.

    ``learner``: SVM-struct's learners read ``-h N`` as SVM-light's shrinking setting,
    so there ``-h`` followed by a number is that (accepted, unused) and only a bare
    ``-h`` asks for help."""

    def __init__(self, prog, description, epilog="", learner=False):
        super().__init__(prog=prog, description=description, epilog=epilog, add_help=False,
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         allow_abbrev=False)
        self.learner = learner
        self.register("type", float, strict_float)  # (type=float and type=int options)
        self.register("type", int, strict_int)
        self.add_argument("-?", "-h", "--help", action="help",
                          help="show this help and exit" + (" (-h N: SVM-light's shrinking "
                                                            "setting, accepted, unused)"
                                                            if learner else ""))

    def error(self, message):
        raise CLIError(message)

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but an unknown option is named as such: argparse would take
        its value for a positional argument and report a later one instead."""
        args = sys.argv[1:] if args is None else list(args)
        if self.learner:
            args = _drop_shrinking_option(args)
        known = {s for action in self._actions for s in action.option_strings}
        for token in args:
            if token == "--":
                break
            if not token.startswith("-") or len(token) < 2 or _is_number(token):
                continue
            # --name or --name=value; -x, or -x with its value attached (-c0.1, -v0)
            name = token.split("=", 1)[0] if token.startswith("--") else token[:2]
            if name not in known:
                raise CLIError(f"unknown option {token}")
            # (argparse turns an attached '--' into an empty list: -l--, -c=--, --groups=--)
            attached = token[len(name):].removeprefix("=")
            if attached == "--":
                raise CLIError(f"argument {name}: expected a value, got '--'")
        return super().parse_args(args, namespace)


def _drop_shrinking_option(args):
    """The arguments without SVM-light's ``-h N`` / ``-hN`` (a number follows)."""
    kept, k = [], 0
    while k < len(args):
        token = args[k]
        if token == "--":
            return kept + args[k:]
        if token == "-h" and k + 1 < len(args) and _is_number(args[k + 1]):
            k += 2
            continue
        if token.startswith("-h") and _is_number(token[2:]):
            k += 1
            continue
        kept.append(token)
        k += 1
    return kept


def training_summary(result, elapsed, stopped="Stopped at -# (not converged)",
                     interrupted=False, slack_scale=1.0, converged=None):
    """The cutting-plane learners' summary line of a fit's ``result_`` (``interrupted``:
    Ctrl-C ended it; ``converged``: the whole fit's status when it is not the last
    solve's, as for the latent models' CCCP); the slack times ``slack_scale`` (the
    estimator's C over the tool's: objective = ½‖w‖² + C·slack on the tool's scale)."""
    r = result
    converged = r.converged if converged is None else converged
    status = ("Interrupted (not converged)" if interrupted else "Converged" if converged
              else stopped)
    return (f"{status} after "
            f"{r.n_iter} iteration{'s' * (r.n_iter != 1)}, {r.n_constraints} "
            f"constraint{'s' * (r.n_constraints != 1)}; objective "
            f"{r.primal_objective:.8g}, duality gap {r.duality_gap:.3g}, slack "
            f"{slack_scale * r.xi:.6g}; "
            f"{elapsed:.2f}s.")


def fit_and_write(estimator, X, y, args, written, version=None, tool_c=None, **fit_kwargs):
    """Fit ``estimator`` (a ValueError names ``args.example_file``), write its SVM-light
    model to ``args.model_file`` (its version line ``version``, default V6.20) and, at
    ``args.v >= 1``, print the summary (its slack on the scale of the tool's C,
    ``tool_c``, when it is not the estimator's) then ``written``."""
    import time

    from ..io.estimator_model import to_model
    from ..io.model_file import VERSION, write_model
    start = time.perf_counter()
    try:
        estimator.fit(X, y, **fit_kwargs)
    except ValueError as exc:  # the data cannot be trained on: say which file
        raise ValueError(f"{args.example_file}: {exc}") from None
    elapsed = time.perf_counter() - start
    stop_if_interrupted(args, estimator)
    plot_if_asked(args, "training_curves", estimator)
    write_model(args.model_file, to_model(estimator, n_train=X.shape[0]),
                version=version or VERSION)
    if args.v >= 1:
        summary = training_summary(estimator.result_, elapsed, "Stopped (not converged)",
                                   getattr(estimator, "interrupted_", False),
                                   float(estimator.C) / tool_c if tool_c else 1.0)
        print(f"{summary}\n{written}", flush=True)


def stop_if_interrupted(args, estimator):
    """After a fit that Ctrl-C ended (the estimator keeps its best point): raise
    KeyboardInterrupt (exit 130, no model written) unless ``--save-on-interrupt``."""
    if getattr(estimator, "interrupted_", False) and not args.save_on_interrupt:
        raise KeyboardInterrupt


def plot_if_asked(args, function, *plot_args, **kwargs):
    """:func:`write_plot` to ``--plot`` FILE when it was given."""
    if getattr(args, "plot", None):
        write_plot(args.plot, function, *plot_args, **kwargs)


def plot_pr_if_asked(args, y, scores, qid):
    """The classifiers' ``--plot``: the precision-recall curve of ``scores``, the mean
    over the queries (with a band) when ``qid`` has several, else one curve."""
    if getattr(args, "plot", None):
        kind = "mean" if qid is not None and len(np.unique(qid)) > 1 else "overall"
        write_plot(args.plot, "pr_curve", y, scores, qid, kind=kind)


def check_outputs(args, path, inputs=()):
    """Before any work: ``path`` can be written (``check_writable``), and so can the
    ``--plot`` figure, whose extension must be a format matplotlib writes."""
    check_writable(path, inputs=inputs)
    figure = getattr(args, "plot", None)
    if not figure:
        return
    check_writable(figure, inputs=inputs)
    if os.path.realpath(figure) == os.path.realpath(path):
        raise CLIError(f"--plot {figure}: it is also the output file (one would overwrite "
                       "the other)")
    from .. import plot  # (matplotlib only when --plot is given: the extra's error now)
    suffix = os.path.splitext(figure)[1].lstrip(".").lower() or "png"
    formats = plot.new_figure().canvas.get_supported_filetypes()
    if suffix not in formats:
        raise CLIError(f"--plot {figure}: unknown figure format {suffix!r}; use one of "
                       f"{', '.join(sorted(formats))}")


def write_no_predictions(args, after_progress=False):
    """An example file without example lines: an empty output file and exit status 0,
    as SVM-light's and SVM-rank's classifiers do (a sharded pipeline's empty shard)."""
    from ..io.atomic import atomic_write
    with atomic_write(args.output_file):
        pass
    if getattr(args, "v", 1) >= 1:
        print(f"{chr(10) if after_progress else ''}{args.example_file}: no example lines: "
              f"wrote an empty {args.output_file}", flush=True)
    return 0


def write_plot(path, function, *args, **kwargs):
    """Draw a figure with ``svmrank.plot.<function>(*args, ax=..., **kwargs)`` and save
    it atomically to ``path`` (its format from the file name's extension, png by
    default). Data the figure cannot show (no relevant example, a label outside the
    classes) is a warning and no figure: the predictions and measures stand."""
    from .. import plot  # (matplotlib only when --plot is given)
    from ..io.atomic import atomic_write
    figure = plot.new_figure()
    try:
        getattr(plot, function)(*args, ax=figure.add_subplot(), **kwargs)
    except ValueError as exc:
        warnings.warn(f"--plot {path}: no figure written: {exc}", UserWarning, stacklevel=2)
        return
    figure.tight_layout()
    suffix = os.path.splitext(path)[1].lstrip(".") or "png"
    with atomic_write(path, "wb") as fh:
        figure.savefig(fh, format=suffix)


# True inside run(): a command's own context, where --threads may set the thread count
# (parsing elsewhere, as the tests do, changes nothing)
_IN_COMMAND = contextvars.ContextVar("svmrank_cli_command", default=False)


class ThreadsAction(argparse.Action):
    """argparse action of ``--threads N``: N >= 1, set as the thread count of the
    per-query work when parsed inside :func:`run`."""

    def __call__(self, parser, namespace, value, option_string=None):
        if value < 1:
            raise CLIError(f"--threads: expected an integer >= 1, got {value}")
        if _IN_COMMAND.get():
            set_threads(value)
        setattr(namespace, self.dest, value)


def _is_number(token):
    return bool(_FLOAT.fullmatch(token.strip()))


def example_place(path, k):
    """``path:N`` for the k-th example (0-based) of an SVMlight file, N its line, for a
    message about it once the file is parsed (read again: only on that error path), or
    ``path: example k+1`` when the file cannot be read again (a pipe)."""
    from ..io.svmlight import example_lines, open_data
    try:
        if os.path.isfile(path):
            with open_data(path) as (fh, _):  # (decompressed, as it was read)
                lines = example_lines(fh.read())
            if k < len(lines):
                return f"{path}:{lines[k]}"
    except (OSError, EOFError):
        pass
    return f"{path}: example {k + 1}"


def load_training(path, load=None, **kwargs):
    """``load(path, max_index=MAX_TRAIN_FEATURES, **kwargs)`` (default
    :func:`~svmrank.io.svmlight.load_svmlight`) for a learner: a file whose lines are
    labels only is refused by name (SVM-light's learners write a model of w = 0)."""
    from .._validation import MAX_TRAIN_FEATURES
    from ..io.svmlight import load_svmlight
    loaded = (load or load_svmlight)(path, max_index=MAX_TRAIN_FEATURES, **kwargs)
    if loaded[0].shape[1] == 0:
        raise ValueError(f"{path}: no example line has a feature (idx:val), so there is "
                         "no weight to learn")
    return loaded


def refuse_overflowing_rows(values, path, what):
    """ValueError naming the file and line of the first row of ``values`` (1-d, or 2-d
    by row) that is not finite."""
    bad = ~np.isfinite(values)
    bad = bad.any(axis=1) if bad.ndim == 2 else bad
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{example_place(path, k)}: {what} overflows: scale the features "
                         "down")


@contextlib.contextmanager
def dask_client(args):
    """``--dask``: (svmrank.dask, a client of the scheduler ``args.dask``); a LocalCluster
    that ``local:N`` started is closed after."""
    try:
        from .. import dask as svmrank_dask
        from distributed.comm import CommClosedError
    except ImportError as exc:
        raise CLIError(f"--dask: {exc}") from None
    svmrank_dask.shard_paths(args.example_file)  # (a bad glob before the cluster starts)
    # (distributed's own log lines, tracebacks of reconnection attempts among them, would
    # come before the one-line error that ends the command)
    for name in ["distributed", *logging.root.manager.loggerDict]:  # (some have own levels)
        if name.startswith("distributed"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    client = svmrank_dask.connect(args.dask)
    try:
        yield svmrank_dask, client
    except (asyncio.CancelledError, concurrent.futures.CancelledError, CommClosedError) as exc:
        # (the scheduler went away mid-work: its futures are cancelled)
        raise OSError(f"--dask: lost the Dask scheduler at {args.dask} while working "
                      f"({type(exc).__name__})") from None
    except RuntimeError as exc:  # (a lost partition that cannot be rebuilt)
        raise OSError(f"--dask: {exc}") from None
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and args.dask.startswith("local:"):
            cluster.close()


def scores_on_dask(args, coef, intercept, n_features):
    """``--dask`` classification: every shard of ``args.example_file`` read and scored on
    a worker (svmrank.dask.score_svmlight). Returns scores, y and qid in input order and
    the CPU seconds; values beyond the model's ``n_features`` are counted in a warning
    and ignored, as SVM-light does, and a score that overflows names its file:line."""
    with dask_client(args) as (svmrank_dask, client):
        start = time.process_time()
        scores, y, qid, shards = svmrank_dask.score_svmlight(args.example_file, coef,
                                                             intercept, client=client)
        runtime = time.process_time() - start
    first = 0
    for path, n_rows, cut_values, cut_lines in shards:
        if cut_values:
            warnings.warn(f"{path}: {cut_values} feature values on {cut_lines} lines have an "
                          f"index above the model's highest ({n_features}); they are "
                          "ignored, as SVM-light does", UserWarning, stacklevel=3)
        refuse_overflowing_rows(scores[first:first + n_rows], path, "the score w·x - b")
        first += n_rows
    return scores, y, qid, runtime


def positive_float(name):
    """argparse type: a finite number > 0, with an error naming the option."""
    def convert(text):
        try:
            value = strict_float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} expects a number, got {text!r}") from None
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0, got {text!r}")
        return value
    return convert


def nonempty(what):
    """argparse type: a non-empty string (an empty ``--edges ''`` is a mistake, not "none")."""
    def convert(text):
        if not text:
            raise argparse.ArgumentTypeError(f"expected {what}, got ''")
        return text
    return convert


class _ReaderGone:
    """stdout that outlives its reader: once the pipe breaks (``learn ... | head``),
    the rest of the output is dropped and the work goes on, so the model or the
    predictions are still written. The descriptor is pointed at /dev/null, so the
    interpreter's last flush does not fail either. ``end_line`` ends a progress line
    ("Reading...") before a warning or an error, so that a log of both streams keeps
    them on lines of their own."""

    def __init__(self, stream):
        self._stream, self._gone, self._open_line = stream, False, False

    def _call(self, method, *args):
        if not self._gone:
            try:
                return getattr(self._stream, method)(*args)
            except BrokenPipeError:
                self._gone = True
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._stream.fileno())
                os.close(null)
            except OSError as exc:  # (a full disk, say: the message names the stream)
                raise OSError(exc.errno, f"standard output: {exc.strerror or exc}") from None
        return len(args[0]) if args else None

    def write(self, text):
        if text:
            self._open_line = not text.endswith("\n")
        return self._call("write", text)

    def end_line(self):
        if self._open_line:
            self._open_line = False
            try:
                self._call("write", "\n")
                self._call("flush")
            except OSError:  # (the error being reported may be this stream's own)
                pass

    def flush(self):
        return self._call("flush")

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _all_cores_then(main, argv):
    _IN_COMMAND.set(True)
    set_threads(None)
    return main(argv)


def _one_line(exc):
    """``exc`` as the error line: an OSError about a file is "file: reason", the file
    name as given (Python's "[Errno 2] ...: 'name'" escapes bytes that are not UTF-8)."""
    if isinstance(exc, OSError) and isinstance(exc.filename, (str, bytes)) and exc.strerror:
        names = [os.fsdecode(f) for f in (exc.filename, exc.filename2) if f is not None]
        return f"{' -> '.join(names)}: {exc.strerror}"
    return str(exc)


def run(main, argv=None, prog=None):
    """Run ``main(argv)`` and turn errors into one line on stderr and an exit status:
    2 for usage errors, 1 for bad input files and other failures. A closed stdout
    (a pipe into ``head``) only silences the output."""
    prog = prog or getattr(main, "__module__", "svmrank").rsplit(".", 1)[-1]
    argv = sys.argv[1:] if argv is None else argv

    def end_progress_line():
        if isinstance(sys.stdout, _ReaderGone):
            sys.stdout.end_line()

    def one_line(message, category, filename, lineno, file=None, line=None):
        end_progress_line()
        print(f"{prog}: warning: {message}", file=sys.stderr, flush=True)

    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 still prints
        if hasattr(stream, "reconfigure") and stream.errors in ("strict", "backslashreplace"):
            stream.reconfigure(errors=_ECHO_BYTES)
    stdout = sys.stdout
    if stdout is not None:  # (None: started with stdout closed; print() then does nothing)
        sys.stdout = _ReaderGone(stdout)
    from ..progress import plain_lines  # (verbose lines stay SVM-struct's on a terminal)
    try:
        with warnings.catch_warnings(), plain_lines():
            warnings.showwarning = one_line
            # (--threads sets the thread count in this command's own context)
            return contextvars.copy_context().run(_all_cores_then, main, argv) or 0
    except CLIError as exc:
        end_progress_line()
        print(f"{prog}: error: {exc} (see -? for help)", file=sys.stderr)
        return 2
    except (InputFormatError, ValueError, OSError, QPError) as exc:
        end_progress_line()
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except MemoryError:
        end_progress_line()
        print(f"{prog}: error: out of memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        end_progress_line()
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout
