"""Publishing: ``leaderboard.json`` and a ready Hugging Face Space (:mod:`.writer`), pushed by :mod:`.hub`.

:mod:`.models` defines the versioned ``leaderboard.json`` format, :mod:`.space` the Space around it.
"""
