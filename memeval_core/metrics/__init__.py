"""Retrieval metrics at a cutoff k (NDCG@k, P@k, R@k, MRR@k, F1@k), per query, with numpy.

Relevance is binary; duplicates in a ranked list count once (first occurrence); queries with no gold are NaN
and left out of means. :func:`~memeval_core.metrics.hits.hits_at_k` turns the input into a hits matrix
(:mod:`memeval_core.metrics.hits`); each metric (one module each, its formula in the docstring) computes per-query
scores from that matrix, and :func:`~memeval_core.metrics.evaluate.aggregate` averages them.
"""
