"""``python -m clients.cli``: run the command line client (``clients.cli.commands.main``)."""

import sys

from clients.cli.commands import main

sys.exit(main())
