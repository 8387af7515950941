"""Tests for pymc_partitions._validation: the one input-validation layer (importable without PyMC: ``test_imports.py``)."""

import numpy as np
import pytest

from pymc_partitions._validation import (
    as_label_array,
    check_choice,
    check_count,
    check_dimension,
    check_flag,
    check_hyperparameter,
    check_item_indices,
    check_label_pair,
    check_label_vector,
    check_positive_int,
    check_var_name,
)

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py


def test_symbolic_values_are_still_recognised():
    import pytensor.tensor as pt

    from pymc_partitions._validation import check_hyperparameter, constant_value

    assert constant_value(pt.constant(2.5)) == 2.5
    assert constant_value(pt.scalar("a")) is None
    a = pt.vector("a", shape=(3,))
    assert check_hyperparameter("a", a, lower=0) is a
    with pytest.raises(ValueError, match="a must have at most 0 dimension"):
        check_hyperparameter("a", a, ndim_max=0)


# --------------------------------------------------------------------------- #
# integers, flags, choices
# --------------------------------------------------------------------------- #


def test_integer_checks():
    assert check_positive_int("n_starts", np.int64(3)) == 3
    assert check_positive_int("n", 5, "the number of items") == 5
    with pytest.raises(TypeError, match=r"n must be a positive integer \(the number of items\), got float 2.0"):
        check_positive_int("n", 2.0, "the number of items")
    with pytest.raises(TypeError, match="max_sweeps must be a positive integer, got bool True"):
        check_positive_int("max_sweeps", True)
    with pytest.raises(ValueError, match="n_starts must be a positive integer, got 0"):
        check_positive_int("n_starts", 0)
    assert check_count("n_intermediate", 0, 0) == 0
    assert check_count("n_moves", np.int32(2), 1) == 2
    for bad in (1.5, True, 0, "2"):
        with pytest.raises(ValueError, match="n_moves must be an integer >= 1"):
            check_count("n_moves", bad, 1)
    assert check_dimension(np.int64(4)) == 4
    for bad in (0, 2.0, False, None):
        with pytest.raises(ValueError, match=r"d must be a positive integer \(the number of features\)"):
            check_dimension(bad)


def test_flag_and_choice():
    assert check_flag("gibbs_sweep", False) is False
    with pytest.raises(TypeError, match="gibbs_sweep must be True or False, got 'yes'"):
        check_flag("gibbs_sweep", "yes")
    assert check_choice("loss", "binder", ("VI", "Binder")) == "Binder"
    with pytest.raises(ValueError, match="loss must be 'VI' or 'Binder', got 'L2'"):
        check_choice("loss", "L2", ("VI", "Binder"))
    with pytest.raises(ValueError, match="variant must be one of 'arm', 'sarm', 'rarm', got None"):
        check_choice("variant", None, ("arm", "sarm", "rarm"))


# --------------------------------------------------------------------------- #
# pack_params hyperparameters
# --------------------------------------------------------------------------- #


def test_per_feature_and_scalar():
    """``check_hyperparameter`` for a scalar or one value per feature (``length``) and for a scalar (``ndim_max=0``)."""
    check_hyperparameter("a", 2.0, length=3)
    check_hyperparameter("a", [1, 2, 3], lower=0, length=3)
    with pytest.raises(ValueError, match="a must be a scalar or have length 3"):
        check_hyperparameter("a", [1.0, 2.0], length=3)
    with pytest.raises(ValueError, match="mu0 must have at most 1 dimension"):
        check_hyperparameter("mu0", np.zeros((3, 1)), length=3)
    with pytest.raises(ValueError, match="b must be > 0"):
        check_hyperparameter("b", [1.0, 0.0, 1.0], lower=0, length=3)
    with pytest.raises(ValueError, match="mu0 must be finite"):
        check_hyperparameter("mu0", [0.0, np.inf, 0.0], length=3)
    check_hyperparameter("kappa0", np.asarray(0.5), ndim_max=0, lower=0.0)
    with pytest.raises(ValueError, match="nu0 must be > 2.0"):
        check_hyperparameter("nu0", 1.5, ndim_max=0, lower=2.0)
    with pytest.raises(ValueError, match="kappa0 must have at most 0 dimension"):
        check_hyperparameter("kappa0", [1.0, 2.0], ndim_max=0)


# --------------------------------------------------------------------------- #
# labels and item indices
# --------------------------------------------------------------------------- #


def test_item_indices_for_summaries():
    out = check_item_indices("items", [4, 0, 2], 5, allow_empty=False)
    assert out.dtype == np.int64 and out.tolist() == [4, 0, 2]
    for bad, match in [
        (None, "items must be a non-empty 1-D list of item indices, got None"),
        ([], r"items must be a non-empty 1-D list of item indices, got shape \(0,\)"),
        ([[0]], "non-empty 1-D list"),
        ([0.0, 1.0], "items must hold integer item indices, got dtype float64"),
        ([True, False], "items must hold integer item indices, got dtype bool"),
        ([0, 5], r"items must be indices in 0 .. 4 \(n = 5 items\), got values from 0 to 5"),
        ([-1, 2], "items must be indices in 0 .. 4"),
        ([2, 1, 2, 1], r"items must not contain repeated indices, got \[1, 2\] more than once"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_item_indices("items", bad, 5, allow_empty=False)
    assert check_item_indices("items", [10**9], None, allow_empty=False).tolist() == [10**9]


def test_item_indices_for_keep_items():
    for empty in (None, [], ()):
        out = check_item_indices("keep_items", empty, 5, allow_empty=True)
        assert out.dtype == np.int64 and out.shape == (0,)
    assert check_item_indices("keep_items", (3, 1), 5, allow_empty=True).tolist() == [3, 1]
    # the messages tests/steps/test_steps.py matches
    with pytest.raises(ValueError, match="keep_items must not contain repeated indices"):
        check_item_indices("keep_items", [0, 0], 5, allow_empty=True)
    with pytest.raises(ValueError, match="keep_items must be indices in 0 .. 4"):
        check_item_indices("keep_items", [5], 5, allow_empty=True)
    with pytest.raises(ValueError, match="keep_items must be a 1-D list of item indices"):
        check_item_indices("keep_items", 3, 5, allow_empty=True)


def test_label_arrays():
    assert as_label_array("z", [1.0, 2.0]).dtype == np.int64
    assert as_label_array("z", np.array([1, 2], dtype=np.int32)).dtype == np.int32
    with pytest.raises(ValueError, match="z must have at least one dimension"):
        as_label_array("z", 3)
    assert check_label_vector("reference", [2, 2, 0], 3).tolist() == [2, 2, 0]
    with pytest.raises(ValueError, match=r"reference must be a 1-D label vector of length 3, got shape \(1, 3\)"):
        check_label_vector("reference", [[2, 2, 0]], 3)
    a, b = check_label_pair([0, 1], [1.0, 1.0])
    assert a.tolist() == [0, 1] and b.tolist() == [1, 1]
    with pytest.raises(TypeError, match="var_name must be a string"):
        check_var_name(None)


# --------------------------------------------------------------------------- #
# partition prior supports: one table for the steps' numbers and the log densities' graphs
# --------------------------------------------------------------------------- #


def test_prior_support_is_the_same_for_numbers_and_graphs():
    """``check_prior_values`` (numbers read by a step) rejects exactly where the symbolic conditions are false."""
    import itertools

    import pytensor
    import pytensor.tensor as pt

    from pymc_partitions import priors
    from pymc_partitions.priors import check_values as check_prior_values, support as prior_support

    grid = [-1.0, -0.3, 0.0, 0.3, 1.0, 2.0, np.inf, np.nan]
    for prior in (priors.DP, priors.PY, priors.NGGP, priors.MFM):
        names = [name for name in priors.PARAM_NAMES[prior] if name != "k_prior"]
        symbols = {name: pt.dscalar(name) for name in names}
        conditions = pytensor.function(list(symbols.values()), [ok for _, ok, _ in prior_support(prior, symbols)])
        for values in itertools.product(grid, repeat=len(names)):
            inside = all(bool(ok) for ok in conditions(*values))
            extra = [np.zeros(1)] if prior == priors.MFM else []  # the MFM's log k prior is not checked here
            if inside:
                check_prior_values(prior, [*values, *extra])
            else:
                with pytest.raises(ValueError, match="read from the sampler's current point"):
                    check_prior_values(prior, [*values, *extra])
