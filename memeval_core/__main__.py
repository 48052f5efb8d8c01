"""``python -m memeval_core``."""

import sys

from memeval_core.cli import main

sys.exit(main())
