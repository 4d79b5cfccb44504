"""Command line: ``plausible aggregate`` fits an aggregation model to an annotation file and
writes per-item plausibilities; ``plausible evaluate`` scores a classifier against a saved
aggregation; ``plausible next`` says which items (and annotators) to annotate next;
``plausible report`` writes a saved run's report, one HTML page; ``plausible models`` lists
the models.

Examples::

    plausible aggregate labels.csv -o plausibilities.csv          # task, worker, label
    plausible aggregate votes.csv --model dirichlet --reliability 3 -o out.csv
    plausible aggregate rankings.json --reliability 20 --save run.nc
    plausible aggregate ratings.csv --threshold 50 -o out.csv      # item, worker, score
    plausible aggregate ratings.csv --threshold 50 --model censored-normal-inverse-gamma \
        --scale 0 100 --resolution 1 -o out.csv                     # a 0..100 integer slider
    plausible aggregate --dataset cifar10h -o cifar10h.csv         # public data (PLAUSIBLE_DATA)
    plausible evaluate run.nc predictions.csv -o metrics.csv
    plausible evaluate run.nc probs.npy -o metrics.csv             # (item, class) probabilities
    plausible aggregate votes.csv --predictions probs.npy -o out.csv  # a classifier's prior
    plausible next labels.csv --model dawid-skene --budget 50 -o batch.csv
    plausible aggregate labels.csv --save run.nc --report report.html
    plausible report run.nc -o report.html
    plausible aggregate votes.parquet --store shards/ --workers 4   # shards of items, resumable
    plausible aggregate parts/ --model dawid-skene --workers 4      # Parquet files the workers read

Every error exits with status 2 and one line naming the file, column, item or option; no
output file is written unless the run succeeds (written to a temporary file, then renamed),
and an existing one is replaced only with ``--force``.

The package: :mod:`~plausible.cli.parser` (the options and their help),
:mod:`~plausible.cli.inputs` (what a command reads), :mod:`~plausible.cli.output` (what it
writes and prints) and :mod:`~plausible.cli.commands` (one function a subcommand; every fit
goes through :func:`plausible.aggregate`, which decides where it runs); :func:`main` parses,
dispatches and says any error in one line.
"""

from __future__ import annotations

import os
import sys
import warnings

from plausible.cli import commands
from plausible.cli.parser import build_parser

ERRORS = (ValueError, TypeError, OSError, KeyError, ImportError)  # ImportError: a missing extra


def _one_line(error: BaseException) -> str:
    text = str(error) if str(error) else type(error).__name__
    if isinstance(error, KeyError):
        text = f"missing {text}"
    return " ".join(text.split())


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as the command line says it: one line, no source location."""
    print(f"plausible: warning: {_one_line(message)}", file=sys.stderr)


def main(argv=None) -> int:
    """``plausible ARGS`` (``argv``, default the process's): the exit status, 2 for any error,
    said in one line on stderr (``PLAUSIBLE_DEBUG=1`` raises it instead)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error (already printed)
        return stop.code
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = getattr(commands, args.handler)(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:  # e.g. | head: the files are written; stop printing quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("plausible: interrupted; no output written", file=sys.stderr)
        return 130
    except ERRORS as error:
        if os.environ.get("PLAUSIBLE_DEBUG"):
            raise
        print(f"plausible: error: {_one_line(error)}", file=sys.stderr)
        return 2


__all__ = ["build_parser", "main"]
