"""One importer per QA result format: each has ``sniff(data, path) -> bool`` (by content) and ``load``.

``mem0_eval``, ``evermemos``, ``memorybench``, ``zep``, ``cognitive_memory``, ``mflow_longmemeval``,
``generic`` (any per-question table plus a mapping file) and ``native`` (memeval's own format).
"""
