"""``python -m builder.cli``: the same as the ``swt-builder`` script."""

import sys

from builder.cli import main

sys.exit(main())
