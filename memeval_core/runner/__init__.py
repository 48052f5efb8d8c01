"""Run PrecisionMemBench against a provider's HTTP wrapper, the way the upstream TypeScript harness does.

The harness (tenurehq/precisionMemBench ``src/adapters/baseAdapter.ts``, ``universalSessionAdapter.ts``,
``retrieval.external.eval.test.ts``, ``session-retrieval.external.eval.test.ts``,
``utils/buildRetrievalReport.ts``) talks to a wrapper over five endpoints; this package does the same and
writes reports in the harness's format, scored with memeval's own assertion code. See docs/RUNNER.md.
"""
