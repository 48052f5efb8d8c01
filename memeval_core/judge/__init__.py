"""Re-judge QA runs with any OpenAI-compatible LLM judge (``python -m memeval_core judge``).

One small module per concern:

- :mod:`~memeval_core.judge.prompts`: the versioned judge prompts (mem0's LoCoMo CORRECT/WRONG prompt,
  LongMemEval's per-question-type prompts, memeval's 0-5 rubric, prompt files) and their verdict parsers;
- :mod:`~memeval_core.judge.pricing`: the price table and the token and cost estimates;
- :mod:`~memeval_core.judge.client`: one chat-completions call with timeout, retries, backoff and
  ``Retry-After``, every failure turned into one sentence that never contains the key;
- :mod:`~memeval_core.judge.cache`: the SQLite verdict cache (WAL, one transaction per verdict);
- :mod:`~memeval_core.judge.runner`: bounded-concurrency judging of a run's answers, cost cap, progress;
- :mod:`~memeval_core.judge.output`: the judged run written in memeval's own run format;
- :mod:`~memeval_core.judge.lineup`: judged runs folded back into the runs they re-judge, and the
  accuracy of each run under each judge (judge sensitivity).

See ``docs/JUDGING.md``.
"""
