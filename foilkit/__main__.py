"""``python -m foilkit`` (and ``accelerate launch -m foilkit score ...``)."""

import sys

from foilkit.cli import main

sys.exit(main())
