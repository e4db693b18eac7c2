"""The arithmetic of "this node fails more than the fleet does": exact binomial tails and Wilson bounds.

A node that ran ``n`` jobs, ``k`` of which a root finding blamed on it, is compared with the fleet's
rate ``p0`` (blamed job-node pairs over all job-node pairs). Under "this node is like the others",
``k`` is Binomial(n, p0); the one-sided p-value is P(X >= k). With thousands of nodes tested at once
some would pass a plain 1% test by chance, so the threshold is divided by the number of nodes tested
(Bonferroni: conservative, which is the right side to err on before draining a node).
"""

from __future__ import annotations

import math

Z95 = 1.6448536269514722  # one-sided 95%


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for k successes in n trials (0..1 when there are no trials)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - margin) / denom), min(1.0, (centre + margin) / denom)


def wilson_lower(k: int, n: int, z: float = Z95) -> float:
    """Lower bound of the Wilson score interval: a rate that small samples cannot inflate (1/1
    gives 0.27, not 1.0)."""
    return wilson_interval(k, n, z)[0]


def binomial_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed in log space (exact; n is a node's job count)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
        for i in range(k, n + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def wilson_upper(k: int, n: int, z: float = Z95) -> float:
    """Upper bound of the same interval: with ``wilson_lower``, the bar a chart draws around k/n."""
    return wilson_interval(k, n, z)[1]
