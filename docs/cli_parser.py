"""The command line's parser as the CLI reference shows it (docs/cli.md).

``plausible.cli.build_parser`` formats its epilogs (the input formats, the output columns)
for a terminal; sphinx-argparse would read them as reStructuredText, so they are shown as
preformatted text, as ``--help`` prints them, with the models named as ``--help`` names them.
"""

import textwrap

from plausible.cli import build_parser
from plausible.cli.parser import name_chain_models


def parser():
    parser = build_parser()
    seen = set()
    for action in parser._subparsers._group_actions:
        for command in action.choices.values():
            name_chain_models(command)  # as --help does
            if command.epilog and id(command) not in seen:
                seen.add(id(command))
                command.epilog = "::\n\n" + textwrap.indent(command.epilog, "    ")
    return parser
