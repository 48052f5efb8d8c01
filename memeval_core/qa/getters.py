"""Attribute getters that QA modules ``map`` over many objects at once (no Python code per object).

``map(DICT_OF, questions)`` reads every question's ``__dict__`` at C speed where a comprehension would run
bytecode per question; the pydantic state getters serve the code that builds or packs instances directly.
"""

from __future__ import annotations

from operator import attrgetter

DICT_OF = attrgetter("__dict__")
"""``vars(obj)``, without the builtin's call overhead."""
FIELDS_SET_OF = attrgetter("__pydantic_fields_set__")
"""A pydantic instance's set of explicitly set fields."""
EXTRA_OF = attrgetter("__pydantic_extra__")
"""A pydantic instance's extra fields (``extra="allow"``)."""
PRIVATE_OF = attrgetter("__pydantic_private__")
"""A pydantic instance's private attributes (None for the QA models)."""
CATEGORY_OF = attrgetter("category")
"""A question's category code."""
SCORED_OF = attrgetter("scored")
"""Whether a question counts in the accuracy denominator."""
