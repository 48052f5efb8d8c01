"""QA benchmarks (LoCoMo, LongMemEval, ...): canonical run format, importers, scoring, publishable check.

Entry points: :func:`memeval_core.qa.ingest.load_qa` and :func:`memeval_core.qa.leaderboard.rows`.
"""
