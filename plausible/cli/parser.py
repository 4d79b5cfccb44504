"""The command line's parser: its subcommands, options and help texts (:func:`build_parser`),
the argument types and the one-line usage errors (:class:`Parser`, :class:`UsageError`).

The help texts name the models from the registry's declarations (:data:`~plausible.models.
registry.DEFAULT_MODELS`, :func:`~plausible.models.registry.ordinal_model`, the builders'
options), never by writing a name: a model added or renamed there is named here. Those reads
build no model; the one list that does (the models whose chain runs over shards,
:data:`CHAIN_MODELS`) is filled in when a help is shown, so a run does not wait for it."""

from __future__ import annotations

import argparse
import textwrap

from plausible import models
from plausible.models.registry import DEFAULT_MODELS

TOOL_FORMATS = ("label-studio", "mturk", "toloka", "prodigy", "sagemaker")
"""The annotation tools whose exports ``--format`` reads (:mod:`plausible.data.tool_exports`;
named here so that ``--help`` imports nothing heavy)."""

INPUT_HELP = """\
input formats (recognised from the file's columns, or named with --format):
  long       one row per annotation: item, annotator, label columns; crowd-kit's
             task, worker, label by default, others named with --item, --annotator, --label
  ratings    long, with a numeric score column (--score) instead of a label
  rankings   long, with a rank column (lower is better, equal ranks tied), or a .json file
             of "selectors": items -> readers -> ordered blocks of tied class ids
  votes      wide: one row per item, an 'item' column and one integer count column per class
files: .csv, .tsv, .parquet, .json, .npy (an integer item x class vote array).
annotation tools' exports (--format NAME; --label names the tag or answer field to read):
  label-studio  Label Studio's JSON or JSON-MIN export of a Choices, Rating or Ranker tag
  mturk         a Mechanical Turk batch results CSV (HITId, WorkerId, Answer.* columns)
  toloka        a Toloka results TSV (ASSIGNMENT:worker_id, ASSIGNMENT:task_id, OUTPUT:*)
  prodigy       a Prodigy db-out JSONL file (choice or classification tasks)
  sagemaker     a SageMaker Ground Truth job's output folder (its worker responses)

"""

AGGREGATE_OUTPUT = """
output (-o, a .csv, .tsv, .parquet or .json file, checked before any work): one row per item
with
  item                   the item's id as in the input
  top_class              the class most often the most plausible over the posterior draws
  probability_top_class  its posterior mean plausibility
  certainty_top1         the share of draws in which top_class is the most plausible class
  plausibility_<class>   the posterior mean plausibility of every class
  consensus_score        (ratings) the expected rating of a new rater, on the rating scale
  consensus_q025/_q975   (ratings) its 95% interval
"""

NEXT_OUTPUT = """
output (-o, a .csv, .tsv, .parquet or .json file, checked before any work): the batch, best
first, one row per item
  item                   the item to annotate next
  annotator              (annotator models) who should annotate it
  information_gain       expected bits gained on the item's class by that annotation
  certainty              the item's top-1 certainty now
  expected_certainty     its expected top-1 certainty after the annotation
  certainty_gain         their difference
The gains (and the certainty beside them) are estimated on at most 500 of the run's draws,
thinned, so certainty can differ from aggregate's in its last digits.
"""

REPORT_OUTPUT = """
output (-o, an .html file, checked before any work): one self-contained page (no server, no
network; open it in any browser) with
  Run and convergence    the model, the data's sizes, the draws, and every variable's worst
                         R-hat and ESS, the worst quantities named
  Certainty              the items' top-1 certainty (log scale) and the least certain items
  Annotators             (label models) each annotator's share of labels right with its 90%
                         interval; confusion matrices, sensitivity and specificity, MACE's
                         spammer flags where the model has them
  Next labels            the next --budget annotations by expected information gain
  Predictive checks      the posterior predictive checks as figures, what they miss in words
  Every item             one row per item, sortable and searchable
"""


CHAIN_MODELS = "{the models whose chain runs over shards}"
"""Stands in a help text for the names of the label models whose chain runs over shards on a
cluster (:func:`plausible.distributed.runs_on_cluster`), filled in by
:func:`name_chain_models` when the help is shown: telling them builds every label model."""


def models_taking(option: str) -> list[str]:
    """The registered models whose builder takes ``option`` (e.g. ``"scale"``), in the
    registry's order (:func:`plausible.models.models_taking`)."""
    return models.models_taking(option)


def models_help() -> str:
    """The epilog's paragraph on the models: the default of every format (one entry for a
    format whose binary default is its own), the model for ordered grades, the options a
    default needs, and the format's models that take ``--scale``."""
    parts = []
    for kind, name in DEFAULT_MODELS.items():
        data, _, binary = kind.partition(" ")
        if binary and DEFAULT_MODELS[data] == name:
            continue
        notes = [f"needs --{option}" for option in models.entry(name).required]
        try:
            notes.insert(0, f"{models.ordinal_model(data)} with --ordinal")
        except ValueError:  # no model reads this format as ordered grades
            pass
        censored = [other for other in models_taking("scale")
                    if models.entry(other).data == data and other != name]
        if censored:
            notes.append(f"{', '.join(censored)} for a slider's floor and ceiling, with --scale "
                         "and --resolution")
        parts.append(f"{name} for {'binary ' if binary else ''}{data.replace('_', ' ')}"
                     + (f" ({'; '.join(notes)})" if notes else ""))
    return textwrap.fill(
        "models (plausible models lists them): by default " + ", ".join(parts) + "; --model "
        "auto fits candidates and keeps PSIS-LOO's choice. Reliability: trust in the "
        "annotators (higher = more certain).", width=92) + "\n\n"


def name_chain_models(parser: argparse.ArgumentParser) -> None:
    """Fill :data:`CHAIN_MODELS` in ``parser``'s own texts (its description and epilog, its
    argument groups' descriptions and its arguments' help) with the registry's names of those
    models; nothing to do (and no model built) where none stands."""
    texts = [(parser, "description"), (parser, "epilog"),
             *((group, "description") for group in parser._action_groups),
             *((action, "help") for action in parser._actions)]
    texts = [(owner, name) for owner, name in texts if CHAIN_MODELS in (getattr(owner, name) or "")]
    if not texts:
        return
    from plausible import distributed

    names = ", ".join(name for name in models.available("labels").index
                      if distributed.runs_on_cluster(name))
    for owner, name in texts:
        setattr(owner, name, getattr(owner, name).replace(CHAIN_MODELS, names))


class UsageError(ValueError):
    """A bad option or path, found before any work is done."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _draws(text: str) -> int | str:
    """``auto`` or a whole number >= 1."""
    if text == "auto":
        return text
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a whole number >= 1, got {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _positive_float(text: str) -> float:
    value = _number(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _probability(text: str) -> float:
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1], got {text}")
    return value


class _WholeWords:
    """argparse's wrapping of help texts, without a break inside a hyphenated word: a model's
    name stays whole, as ``--model`` takes it."""

    def _split_lines(self, text, width):
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class HelpFormatter(_WholeWords, argparse.HelpFormatter):
    """argparse's help layout, names whole."""


class RawDescriptionHelpFormatter(_WholeWords, argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written, the arguments' help wrapped with names whole."""


class Parser(argparse.ArgumentParser):
    """Usage errors in one line (``plausible: error: ...``), exit status 2; the help names the
    models whose chain runs over shards when it is shown (:func:`name_chain_models`), and
    wraps lines between words only (:class:`HelpFormatter`)."""

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def format_help(self) -> str:
        name_chain_models(self)
        return super().format_help()


def _add_input_options(command) -> None:
    """The options that read an annotation file and set the model's common options:
    ``--format``, the column names, ``--reliability`` and ``--alpha``."""
    command.add_argument("--format", choices=["long", "votes", "rankings", "labels", "ratings",
                                              "label_sets", "comparisons", *TOOL_FORMATS],
                         default=None, help="input format (default: recognised from the "
                         "columns); an annotation tool's export by the tool's name")
    for role in ("item", "annotator", "label", "score", "rank"):
        command.add_argument(f"--{role}", default=None, metavar="COLUMN",
                             help=f"the {role} column, when not named as by default")
    command.add_argument("--classes", default=None, metavar="A,B,...",
                         help="labels: the classes, comma-separated, in their order (an ordinal "
                         "scale's grades from lowest to highest); a label outside them is an "
                         "error")
    command.add_argument("--ordinal", action="store_true",
                         help="labels are ordered grades (numbers, or in the order of "
                         "--classes): the default model becomes "
                         f"{models.ordinal_model('labels')}")
    command.add_argument("--reliability", type=_positive_float, default=None,
                         help="trust in the annotators, gamma > 0 (default: the model's)")
    command.add_argument("--alpha", type=_positive_float, default=None,
                         help="prior count per class of the "
                         f"{' and '.join(models_taking('alpha'))} models")


def build_parser() -> argparse.ArgumentParser:
    from plausible import __version__

    parser = Parser(
        prog="plausible",
        description="Bayesian aggregation of disagreeing annotations: posterior plausibilities "
        "and uncertainty-adjusted metrics.")
    parser.add_argument("--version", action="version", version=f"plausible {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    agg = commands.add_parser(
        "aggregate", aliases=["certainty"],
        help="fit an aggregation model to annotations; per-item plausibilities and certainty",
        description="Sample the posterior plausibilities of every item and report how certain "
        "the most plausible class is given the annotators' disagreement.",
        epilog=INPUT_HELP + models_help() + AGGREGATE_OUTPUT,
        formatter_class=RawDescriptionHelpFormatter)
    source = agg.add_mutually_exclusive_group(required=True)
    source.add_argument("annotations", nargs="?", help="annotation file (see input formats)")
    source.add_argument("--dataset", choices=["toy", "cifar10h", "dermatology"],
                        help="a built-in data set instead of a file (toy needs no download)")
    agg.add_argument("--model", default=None, help="registry name, or auto: the candidate "
                     "models' choice by PSIS-LOO, stacked with those of the same meaning "
                     "(default: by format, as listed below)")
    _add_input_options(agg)
    agg.add_argument("--threshold", type=float, default=None,
                     help="ratings: the score above which an item is positive (required)")
    agg.add_argument("--scale", type=float, nargs=2, metavar=("LOW", "HIGH"), default=None,
                     help=f"ratings: the scale's ends, where {', '.join(models_taking('scale'))} "
                     "censors")
    agg.add_argument("--resolution", type=_positive_float, default=None,
                     help="ratings: recorded to this step (1 for an integer slider), for "
                     f"{', '.join(models_taking('resolution'))}")
    agg.add_argument("--draws", type=_draws, default=None,
                     help="draws per chain, or 'auto' (the default; 1000 for shards of "
                     "item-independent models): "
                     "extend the chains until they converge (R-hat <= 1.01, ESS >= 100 per "
                     "chain) or --max-seconds pass")
    agg.add_argument("--max-seconds", type=_positive_float, default=None,
                     help="with --draws auto: stop extending after this many seconds")
    agg.add_argument("--chains", type=_positive_int, default=4, help="number of chains (4)")
    agg.add_argument("--seed", type=int, default=0, help="random seed; same seed, same draws (0)")
    agg.add_argument("--certainty-threshold", dest="threshold_certainty", type=float,
                     default=0.99, help="count items whose certainty is below this (0.99)")
    agg.add_argument("--show", type=int, default=10, help="how many least-certain items to list")
    agg.add_argument("--check", action="store_true",
                     help="also run the model's posterior predictive check")
    agg.add_argument("-o", "--output",
                     help="write one row per item to this .csv/.tsv/.parquet/.json")
    agg.add_argument("--save", help="save the trace (.nc or .zarr) for plausible evaluate "
                     "or --init")
    agg.add_argument("--report", metavar="HTML", default=None,
                     help="also write the run's report, one self-contained .html page (as "
                     "plausible report does)")
    agg.add_argument("--gold", metavar="FILE", default=None,
                     help="the true class of some items (gold questions, an expert's "
                     "adjudication): a table with an item column (task or item) and a class "
                     "column (true_label, gold, known, label or class); label models clamp "
                     "those items' classes")
    agg.add_argument("--predictions", metavar="FILE", default=None,
                     help="a classifier's probabilities per class for these items, as a prior "
                     "(labels, votes): a .npy float (item, class) array in the items' order, or "
                     "a table with an item column (item or task) and one column per class; "
                     "every row sums to one")
    agg.add_argument("--init", metavar="RUN", default=None,
                     help=f"warm start (Dawid-Skene family; with --workers/--scheduler any of "
                     f"{CHAIN_MODELS}): continue the chains of a saved run "
                     "(--save) on a subset of these annotations after a short warm-up")
    agg.add_argument("--force", action="store_true", help="overwrite existing output files")
    agg.add_argument("--data-home", default=None,
                     help="folder of the public data sets (default: $PLAUSIBLE_DATA)")
    agg.add_argument("--no-progress", action="store_true", help="hide progress bars")
    scale = agg.add_argument_group(
        "scale out", "models with independent items: shard items, sample shards in-process or "
        "on Dask workers, keep the draws in a Zarr store; a re-run with the same --store "
        f"resumes, skipping finished shards. The models whose chain runs over shards "
        f"({CHAIN_MODELS}; --model) with --workers or --scheduler: one chain with its items in shards on the workers, checkpointed to "
        "--store every 200 sweeps; a re-run with the same --store resumes from the last "
        "checkpoint with the draws of an uninterrupted run")
    scale.add_argument("--store", default=None,
                       help="folder of the sharded Zarr trace or of the chain's checkpoints, "
                       "kept (default: a temporary trace, removed after the run; no "
                       "checkpoints)")
    scale.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="Dask scheduler address, e.g. tcp://host:8786")
    scale.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                       help="start a local Dask cluster of N workers (without --scheduler)")
    scale.add_argument("--shard-size", type=_positive_int, default=10_000,
                       help="items per shard (10000)")
    agg.set_defaults(handler="aggregate")

    ev = commands.add_parser(
        "evaluate", help="UA metrics of a classifier against a saved aggregation",
        description="Uncertainty-adjusted accuracy of predicted classes or of scores per "
        "class against the posterior of a saved aggregation "
        "(plausible aggregate --save RUN.nc); for a model whose plausibility is the posterior "
        "of one true class, the expected accuracy against that class (rows accuracy, "
        "top<k>_accuracy). A .npy array holds probabilities (every row summing to one within "
        "0.001); a table's columns per class may hold any scores (logits), of which only the "
        "order counts.")
    ev.add_argument("run", help="a saved aggregation (.nc or .zarr)")
    ev.add_argument("predictions", help="a .npy array in the run's item order: float (item, "
                    "class) probabilities or int (item,) class positions; or a table (.csv, "
                    ".tsv, .parquet, .json) with an item column and a prediction column of "
                    "class names or one score column per class")
    ev.add_argument("--item", default=None, metavar="COLUMN", help="the item column")
    ev.add_argument("--prediction", default=None, metavar="COLUMN",
                    help="the predicted-class column (default: prediction or label)")
    ev.add_argument("--k", type=_positive_int, nargs="+", default=[1, 2, 3],
                    help="top-k depths for scores (1 2 3)")
    ev.add_argument("-o", "--output", help="write the metrics to this .csv/.tsv/.parquet/.json")
    ev.add_argument("--force", action="store_true", help="overwrite an existing output file")
    ev.set_defaults(handler="evaluate")

    nxt = commands.add_parser(
        "next", help="which items (and annotators) to annotate next, under a budget",
        description="Fit the model (or load a saved aggregation, .nc/.zarr) and list the next "
        "batch of annotations, one per item, by expected information gain on the item's class; "
        "items whose top-1 certainty reaches --certainty are settled and left out. An empty "
        "batch means stop.", epilog=INPUT_HELP + models_help() + NEXT_OUTPUT,
        formatter_class=RawDescriptionHelpFormatter)
    nxt.add_argument("annotations", help="annotation file (see input formats) or a saved "
                     "aggregation (.nc, .zarr)")
    nxt.add_argument("--budget", type=_positive_int, required=True,
                     help="annotations in the batch (at most one per item)")
    nxt.add_argument("--model", default=None, help="registry name (default: by format)")
    nxt.add_argument("--strategy", choices=["information", "certainty", "uncertainty", "random"],
                     default="information", help="how candidates are ranked (information)")
    nxt.add_argument("--certainty", type=_probability, default=0.95,
                     help="an item is settled at this top-1 certainty (0.95)")
    nxt.add_argument("--min-gain", type=float, default=1e-3,
                     help="leave out annotations expected to gain fewer bits (0.001)")
    nxt.add_argument("--pairs", default=None, metavar="FILE",
                     help="annotator models: table of item, annotator pairs that can be asked "
                     "(default: every pair without a label)")
    _add_input_options(nxt)
    nxt.add_argument("--draws", type=_positive_int, default=1000, help="draws per chain (1000)")
    nxt.add_argument("--chains", type=_positive_int, default=4, help="number of chains (4)")
    nxt.add_argument("--seed", type=int, default=0, help="random seed (0)")
    nxt.add_argument("--init", metavar="RUN", default=None,
                     help="warm start (Dawid-Skene family): continue the chains of a saved run "
                     "on a subset of these annotations, as an annotate-refit loop does")
    nxt.add_argument("-o", "--output", help="write the batch to this .csv/.tsv/.parquet/.json")
    nxt.add_argument("--force", action="store_true", help="overwrite an existing output file")
    nxt.set_defaults(handler="next_annotations", threshold=None, scale=None, resolution=None)

    rep = commands.add_parser(
        "report", help="a saved run's report: one self-contained HTML page",
        description="Read a saved aggregation (plausible aggregate --save RUN.nc) and write its "
        "report: convergence, certainty, annotators, the next items to label, the posterior "
        "predictive checks and every item, in one HTML file that needs no server or network.",
        epilog=REPORT_OUTPUT, formatter_class=RawDescriptionHelpFormatter)
    rep.add_argument("run", help="a saved aggregation (.nc or .zarr)")
    rep.add_argument("-o", "--output", required=True, help="the report, an .html file")
    rep.add_argument("--budget", type=_positive_int, default=20,
                     help="how many next annotations to propose (20)")
    rep.add_argument("--certainty", type=_probability, default=0.95,
                     help="an item is settled at this top-1 certainty (0.95)")
    rep.add_argument("--draws", type=_positive_int, default=200,
                     help="replicated data sets of the predictive checks (200)")
    rep.add_argument("--seed", type=int, default=0, help="random seed of the checks (0)")
    rep.add_argument("--force", action="store_true", help="overwrite an existing output file")
    rep.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    rep.set_defaults(handler="report")

    ls = commands.add_parser("models", help="list the aggregation models")
    ls.set_defaults(handler="list_models")
    return parser
