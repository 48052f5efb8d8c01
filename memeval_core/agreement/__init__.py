"""Judge agreement (raw agreement, unanimity, Cohen's and Fleiss' kappa, Krippendorff's alpha), rank correlation
between run rankings (Kendall's tau-b, leader changes) and bootstrap intervals over items for all of them.

Verdicts are an ``(items x raters)`` array; NaN/None = missing. Formulas are in each module's docstring.
"""

from memeval_core.agreement.intervals import (
    AgreementStatistic,
    BootstrapReport,
    agreement_terms,
    bootstrap,
    bootstrap_agreement,
    bootstrap_kendall_tau,
    resampled_values,
)
from memeval_core.agreement.kappa import (
    ItemTerms,
    PairKappa,
    as_verdict_matrix,
    cohen_kappa,
    fleiss_kappa,
    pairwise_cohen_kappa,
    raw_agreement,
    unanimity,
)
from memeval_core.agreement.krippendorff_alpha import krippendorff_alpha
from memeval_core.agreement.rank_correlation import LeaderChanges, kendall_tau_b, leader_changes

__all__ = [
    "AgreementStatistic",
    "BootstrapReport",
    "ItemTerms",
    "LeaderChanges",
    "PairKappa",
    "agreement_terms",
    "as_verdict_matrix",
    "bootstrap",
    "bootstrap_agreement",
    "bootstrap_kendall_tau",
    "cohen_kappa",
    "fleiss_kappa",
    "kendall_tau_b",
    "krippendorff_alpha",
    "leader_changes",
    "pairwise_cohen_kappa",
    "raw_agreement",
    "resampled_values",
    "unanimity",
]
