"""``python -m ragkit COMMAND``: the command line of ragkit.cli."""

import sys

from ragkit.cli import main, parser

__all__ = ["main", "parser"]

if __name__ == "__main__":
    sys.exit(main())
