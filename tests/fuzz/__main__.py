"""``python -m tests.fuzz``: see :mod:`tests.fuzz.campaign`."""

import sys

from .campaign import main

sys.exit(main())
