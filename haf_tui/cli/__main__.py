"""``python -m haf_tui.cli``."""

import sys

from haf_tui.cli import main

sys.exit(main())
