"""``python -m sluice.cli.manage``: the same as ``sluice connector``."""

import sys

from sluice.cli.manage.entry import main

if __name__ == "__main__":
    sys.exit(main())
