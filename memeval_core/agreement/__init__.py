"""Judge agreement (raw agreement, unanimity, Cohen's and Fleiss' kappa, Krippendorff's alpha), rank correlation
between run rankings (Kendall's tau-b, leader changes) and bootstrap intervals over items for all of them.

Verdicts are an ``(items x raters)`` array; NaN/None = missing. Formulas are in each module's docstring.
"""
