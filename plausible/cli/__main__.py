"""``python -m plausible.cli``: the ``plausible`` command."""

import sys

from plausible.cli import main

sys.exit(main())
