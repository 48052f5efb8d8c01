"""Computation behind the explorer pages: categories, comparisons, drift, latency, Pareto, case views.

Every function is pure: runs and the fixture in, pandas DataFrames or frozen dataclasses out.
"""
