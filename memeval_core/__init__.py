"""memeval core: ingest memory-benchmark results, re-score them from raw per-case data, rank them.

This package never imports streamlit; the app in ``app.py``/``pages/`` only lays out what it computes.
"""

__version__ = "0.1.0"

# Bumped whenever a change to scoring could change a number a user sees; it is part of every
# fingerprint, so caches and exports made by older scoring code are never mistaken for current ones.
SCORING_VERSION = "pmb-1"
