"""One option parser for every console script, built from a table per dialect.

A *dialect* is the command line of one of Joachims' tools (SVM^map for
``svm_ap_learn``, SVM-rank, SVM-perf, SVM-light, SVM-multiclass for ``svm_topk_learn``).
Its table (:class:`Dialect`) lists, per option, one :class:`Option` with a status:

- ``USED``: parsed (type, default) and used; ``scale`` says how the value maps to
  svmrank's estimator (the script applies it: it may depend on the data);
- ``UNUSED``: accepted so that old command lines run (settings of the tool's own solver);
- ``REFUSED``: any use is an error with a one-line reason.

An accepted option may restrict its values (``only``): another value is refused with
the option's ``refuse`` message. :meth:`Dialect.parse` parses and applies these checks;
cross-option checks stay in the script.

Adding a dialect: write its table (``Dialect(prog, description, epilog, positionals,
options)``), reusing the option groups below (:func:`verbosity_options`,
:func:`kernel_options`, :func:`solver_settings`, :data:`PERF_SETTINGS`, ...), give the
script ``build_parser = DIALECT.parser`` and a ``parse_options(argv)`` that calls
``DIALECT.check(build_parser().parse_args(argv))`` then its own cross checks, and add
its rows to docs/cli.md (:meth:`Dialect.markdown` prints them). An option every
script shares (``--threads``, say) goes in :data:`SHARED_OPTIONS`: each dialect's
parser adds it.
"""
import argparse
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .common import CLIError, StructArgumentParser, ThreadsAction, nonempty, positive_float

USED, UNUSED, REFUSED = "used", "unused", "refused"


@dataclass(frozen=True)
class Option:
    """One option of a dialect's table.

    Parameters
    ----------
    flag : str
        ``-c``, ``--b``, ``-#``, ``--lai``...
    status : {"used", "unused", "refused"}
    dest : str, optional
        Attribute of the parsed namespace (default: argparse's, from ``flag``).
    type : callable, optional
        Converts the text (``float`` and ``int`` are strict, as C's ``atof``/``atol``).
    default : object
    help : str
        Help line (``None``: hidden from ``-?``, listed in the docs).
    metavar : str, optional
    choices : sequence, optional
    flag_only : bool
        A switch without a value (``--latent``).
    only : tuple, optional
        The accepted values; any other is refused with ``refuse``.
    refuse : str
        The one-line error, formatted with ``flag`` and ``value``.
    check : callable, optional
        ``check(value)`` returns an error message, or None when the value is fine.
    scale : str
        How the value maps to svmrank's estimator, for the docs.
    action : argparse.Action subclass, optional
        A custom action for the value (``--threads``).
    """

    flag: str
    status: str
    dest: Optional[str] = None
    type: Optional[Callable] = None
    default: Any = None
    help: Optional[str] = None
    metavar: Optional[str] = None
    choices: Any = None
    flag_only: bool = False
    only: Optional[tuple] = None
    refuse: str = "{flag} {value} is not supported"
    check: Optional[Callable] = None
    scale: str = ""
    action: Optional[type] = None

    def add_to(self, parser):
        """Add this option to an argparse parser."""
        kwargs = {"default": self.default,
                  "help": argparse.SUPPRESS if self.help is None else self.help}
        if self.dest:
            kwargs["dest"] = self.dest
        if self.flag_only:
            kwargs["action"] = "store_true"
        else:
            kwargs.update(type=self.type, metavar=self.metavar, choices=self.choices)
            if self.action is not None:
                kwargs["action"] = self.action
            if self.status == REFUSED:
                kwargs["default"] = None
        parser.add_argument(self.flag, **kwargs)

    def name(self):
        """The namespace attribute the option is parsed into."""
        return self.dest or self.flag.lstrip("-").replace("-", "_")

    def validate(self, args):
        """Raise CLIError if the parsed value is refused."""
        value = getattr(args, self.name())
        if self.status == REFUSED:
            if value not in (None, False):
                raise CLIError(self.refuse.format(flag=self.flag, value=value))
            return
        if self.only is not None and value not in self.only:
            raise CLIError(self.refuse.format(flag=self.flag, value=value))
        if self.check is not None and value is not None:
            message = self.check(value)
            if message:
                raise CLIError(message)


@dataclass
class Dialect:
    """A console script's command line: its positionals and its option table.

    Parameters
    ----------
    prog, description, epilog : str
        As argparse's.
    positionals : list of (name, dict)
        ``add_argument`` keywords of each positional argument.
    options : list of Option
    learner : bool
        SVM-struct's learners read ``-h N`` as a solver setting (see
        :class:`~svmrank.cli.common.StructArgumentParser`).
    """

    prog: str
    description: str
    epilog: str
    positionals: list
    options: list
    learner: bool = True
    shared: bool = field(default=True)

    def table(self):
        """The options, the shared ones included."""
        return list(self.options) + (list(SHARED_OPTIONS) if self.shared else [])

    def parser(self):
        """A fresh :class:`~svmrank.cli.common.StructArgumentParser` of the table."""
        p = StructArgumentParser(self.prog, self.description, self.epilog,
                                 learner=self.learner)
        for name, kwargs in self.positionals:
            p.add_argument(name, **kwargs)
        for option in self.table():
            option.add_to(p)
        return p

    def check(self, args):
        """Apply the table's refusals and value checks, in table order; return args."""
        for option in self.table():
            option.validate(args)
        return args

    def parse(self, argv):
        """Parse ``argv`` and check it against the table."""
        return self.check(self.parser().parse_args(argv))

    def markdown(self):
        """The table as markdown rows: option, status, default, meaning."""
        rows = ["| option | status | default | meaning |", "| --- | --- | --- | --- |"]
        for o in self.table():
            meaning = o.help or ""
            if o.status == REFUSED or o.only is not None:
                meaning = (meaning + "; " if meaning else "") + o.refuse.format(
                    flag=o.flag, value="…" if o.only is None else "other")
            if o.scale:
                meaning += f" ({o.scale})"
            default = "" if o.default is None or o.status == REFUSED else f"{o.default}"
            rows.append(f"| `{o.flag}` | {o.status} | {default} | "
                        f"{meaning.replace('|', '/')} |")
        return "\n".join(rows)


# options every dialect takes (svmrank's own)
SHARED_OPTIONS = [
    Option("--threads", USED, type=int, action=ThreadsAction, metavar="N",
           help="threads of the per-query work (default: all cores; the model does not "
                "depend on it). Not -j: SVM-light's cost factor"),
]


def dask_option(what, data):
    """``--dask SCHEDULER``: ``what`` on a Dask cluster (a scheduler address, or
    ``local:N`` for a LocalCluster of N worker processes); example_file may then be a
    glob of shards, ``data`` says what they hold."""
    return Option("--dask", USED, default=None, metavar="SCHEDULER",
                  help=f"{what} on a Dask cluster (pip install svmrank[dask]): a scheduler "
                       f"address, or local:N for N local worker processes; example_file "
                       f"may then be a glob of shards ({data})")


def _at_least(flag, low, what):
    return lambda value: (f"{flag}: expected {what} >= {low}, got {value}"
                          if value < low else None)


def plot_options(what, learner=False):
    """svmrank's ``--plot FILE.png`` (a figure of ``what``, needs svmrank[plot]) and, for
    a learner, ``--save-on-interrupt`` (write the model reached when Ctrl-C stops
    training)."""
    options = [Option("--plot", USED, type=nonempty("a file name"), metavar="FILE.png",
                      help=f"also write a figure of {what} (needs matplotlib: pip install "
                           "'svmrank[plot]')")]
    if learner:
        options.append(Option("--save-on-interrupt", USED, flag_only=True, default=False,
                              help="on Ctrl-C, write the best model reached so far "
                                   "(default: exit 130 without writing a model)"))
    return options


def verbosity_options(v_help, y_help="svm_light's verbosity (accepted, unused)"):
    """SVM-struct's ``-v`` (ours, default 1) and ``-y`` (SVM-light's QP verbosity:
    accepted, unused); any level >= 0, as SVM-struct takes (levels above the highest
    act like it)."""
    return [Option("-v", USED, type=int, default=1, metavar="[0..3]", help=v_help,
                   check=_at_least("-v", 0, "a verbosity level")),
            Option("-y", UNUSED, type=int, default=0, metavar="[0..3]", help=y_help,
                   check=_at_least("-y", 0, "a verbosity level"))]


def kernel_options():
    """``-t`` (0 only) and SVM-light's kernel parameters ``-d -g -s -r -u``, which a
    linear kernel ignores: accepted, unused, so that old command lines run."""
    return ([Option("-t", USED, type=int, default=0, metavar="0", only=(0,),
                    refuse="{flag} {value} is not supported: only linear models (-t 0)",
                    help="kernel type: 0 = linear (the only one; accepted for SVM-struct "
                         "command lines, as are the kernel parameters -d -g -s -r -u, unused)")]
            + [Option(f"-{letter}", UNUSED, dest=f"kernel_{letter}", type=float)
               for letter in "dgsr"]
            + [Option("-u", UNUSED, dest="kernel_u")])


def solver_settings(letters):
    """Settings of SVM-struct's / SVM-light's own solver (cache sizes, working-set
    sizes, shrinking): accepted so that old command lines run, unused, since the QP
    here is solved exactly; ``-a`` (write the dual variables) is refused."""
    return ([Option(f"-{letter}", UNUSED, dest=f"solver_{letter}", type=float, metavar="n")
             for letter in letters]
            + [Option("-a", REFUSED, dest="alphas_file",
                      refuse="-a (write the dual variables to a file) is not supported")])


def _fraction(value):
    return None if value >= 0 else f"--p: expected a fraction >= 0, got {value:g}"


# svm_perf_learn's own -- options: --p (k of Prec@k), --s (shrinking), and the sparse
# kernel approximation's --i --k --r --f (used only with -w 9 or --t): accepted,
# unused; --t other than 0 asks for that approximation and is refused
PERF_SETTINGS = (
    [Option("--p", UNUSED, dest="perf_p", type=float, metavar="n", check=_fraction)]
    + [Option(f"--{name}", UNUSED, dest=f"perf_{name}", type=float, metavar="n")
       for name in ("s", "i", "k", "r")]
    + [Option("--f", UNUSED, dest="perf_f"),
       Option("--t", USED, dest="perf_t", type=int, default=0, only=(0,),
              refuse="{flag} {value} (sparse kernel approximation) is not supported: "
                     "only linear models")])


def rescaling_options():
    """SVM-struct's ``-o 2`` (margin rescaling) and ``-p 1`` (L1 slack), the only values."""
    return [Option("-o", USED, type=int, default=2, metavar="2", only=(2,),
                   refuse="{flag} {value} is not supported: only margin rescaling (-o 2)",
                   help="rescaling: 2 = margin rescaling"),
            Option("-p", USED, type=int, default=1, metavar="1", only=(1,),
                   refuse="{flag} {value} is not supported: only L1 slack (-p 1)",
                   help="L-norm of the slack: 1")]


def learner_positionals(data_help, model_default="svm_struct_model"):
    """A learner's ``example_file [model_file]``."""
    return [("example_file", dict(help=data_help)),
            ("model_file", dict(nargs="?", default=model_default,
                                help=f"where to write the learned model (default "
                                     f"{model_default})"))]


def classifier_positionals(data_help, model_help, written="the scores"):
    """A classifier's ``example_file model_file [output_file]``."""
    return [("example_file", dict(help=data_help)),
            ("model_file", dict(help=model_help)),
            ("output_file", dict(nargs="?", default="svm_predictions",
                                 help=f"where to write {written} (default svm_predictions)"))]


def c_option(default, help):
    """``-c``: a finite C > 0."""
    return Option("-c", USED, type=positive_float("-c"), default=default, metavar="float",
                  help=help)


def require_c(args, tool):
    """SVM-struct's tools (svm_struct_main.c) have no default C: ``-c`` is required."""
    if args.c is None:
        raise CLIError(f"you have to specify a value for the parameter '-c' (C > 0), as "
                       f"for {tool}")


def e_option(default, help):
    """``-e``: a finite epsilon > 0."""
    return Option("-e", USED, type=positive_float("-e"), default=default, metavar="float",
                  help=help)
