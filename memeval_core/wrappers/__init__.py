"""Reference provider wrappers speaking the PrecisionMemBench wrapper protocol, served on 127.0.0.1.

``DELETE /reset``; ``POST /add {text, user_id, metadata, aliases}``; ``POST /search {query, user_id, limit, scope}``
-> ``{results: [{id, memory, metadata}]}``; ``PUT /update``; ``POST /wait``. Start one with
``python -m memeval_core wrapper NAME --port N``.
"""
