"""The log multivariate gamma op of the Normal-inverse-Wishart log density (``families._multigamma``)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
from scipy.special import multigammaln as reference

from pymc_partitions.families._multigamma import multigammaln


def test_value_matches_scipy_without_the_constant():
    a = np.array([4.5, 10.0, 150.3])
    for d in (1, 3, 272):
        shift = d * (d - 1) / 4 * np.log(np.pi)
        expected = [reference(v, d) - shift for v in a] if d < 272 else [reference(v, d) - shift for v in a + 140]
        value = multigammaln(a if d < 272 else a + 140, d).eval()
        np.testing.assert_allclose(value, expected, rtol=1e-12)


def test_gradient_matches_finite_differences():
    a = pt.dvector("a")
    grad = pytensor.function([a], pytensor.grad(multigammaln(a, 5).sum(), a))
    point, h = np.array([3.2, 7.0]), 1e-6
    numeric = [(reference(v + h, 5) - reference(v - h, 5)) / (2 * h) for v in point]
    np.testing.assert_allclose(grad(point), numeric, rtol=1e-7)
