"""Paired statistics for comparing two systems case by case: exact McNemar, paired bootstrap, Holm."""
