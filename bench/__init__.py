"""memeval's benchmark suite: ``python -m bench`` (or ``make bench``) runs every script; see docs/PERFORMANCE.md."""
