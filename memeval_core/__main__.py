"""``python -m memeval_core``."""

import gc
import sys

from memeval_core.cli import main

# The modules imported above live until the process exits. Freezing them (moving them to the collector's
# permanent generation, gc.freeze's purpose) keeps every later full collection from scanning them again:
# a leaderboard of 10,000 runs allocates enough rows to trigger several. Measured in docs/PERFORMANCE.md.
gc.freeze()
sys.exit(main())
