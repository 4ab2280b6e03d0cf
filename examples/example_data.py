"""Where the examples find the public data sets and write their figures.

The data folder is $SVMRANK_SHARED_DATA, else ``../shared/data`` beside this checkout
(as the tests find it). The files come from public sources (see each folder's
SOURCE.txt); an example whose data is absent stops with a message saying so.
"""
import argparse
import os
import sys
import warnings
from pathlib import Path


def _one_line(message, category, filename, lineno, line=None):
    return f"{category.__name__}: {message}\n"


warnings.formatwarning = _one_line  # (an example's warnings without library source lines)


def data_dir():
    """The public data folder ($SVMRANK_SHARED_DATA or ../shared/data)."""
    env = os.environ.get("SVMRANK_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def data_file(*parts):
    """Path of a data file, or exit with a message naming it."""
    path = data_dir().joinpath(*parts)
    if not path.is_file():
        sys.exit(f"data file {path} is absent: set SVMRANK_SHARED_DATA to the folder that "
                 f"holds {'/'.join(parts[:-1]) or parts[-1]}/ (see examples/README.md)")
    return path


def _figure_path(text):
    """--figure's value, refused before any work if it cannot be written there."""
    from matplotlib.figure import Figure
    path = Path(text)
    if path.is_dir() or not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: " + ("is a folder" if path.is_dir() else
                                                        "its folder does not exist"))
    formats = Figure().canvas.get_supported_filetypes()
    if path.suffix.lstrip(".").lower() not in formats:
        raise argparse.ArgumentTypeError(f"{text}: unknown figure format; use one of "
                                         f"{', '.join(sorted(formats))}")
    return text


def positive(kind):
    """An argparse type: a number of ``kind`` (int or float) > 0."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0 or value == float("inf"):
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {what} > 0, got {text!r}")
        return value
    return parse


def run(main):
    """Run an example's ``main``: an error of the library (bad data, an option it
    refuses) ends it with one line, as the console scripts do."""
    try:
        main()
    except (ValueError, OSError) as exc:
        sys.exit(f"{Path(sys.argv[0]).name}: error: {exc}")


def parser(doc):
    """argparse with the options every example has: --quick and --figure."""
    p = argparse.ArgumentParser(description=" ".join(doc.strip().split("\n\n")[0].split()))
    p.add_argument("--quick", action="store_true",
                   help="a small setting that runs in seconds (the test suite uses it)")
    p.add_argument("--figure", default=None, metavar="FILE.png", type=_figure_path,
                   help="where to write the figure (default: the script's name .png in the "
                        "current directory)")
    return p


def save(figure, args, script):
    """Write ``figure`` to --figure (default <script>.png) and say where."""
    path = args.figure or Path(script).with_suffix(".png").name
    figure.tight_layout()
    figure.savefig(path)
    print(f"figure: {path}")


def table(rows, header):
    """Print rows (sequences) under ``header`` as aligned columns."""
    cells = [[str(c) for c in header]] + [[f"{c:.4f}" if isinstance(c, float) else str(c)
                                           for c in row] for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(header))]
    for k, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
        if k == 0:
            print("  ".join("-" * w for w in widths))
