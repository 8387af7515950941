"""What a partition step costs when the learned hyperparameters change at every draw (issue #32 item 1).

With ``with_default_priors`` PyMC moves the family's hyperparameters (NUTS,
or a population step's slice sampler) between the partition moves, so every
draw of a partition step sees new hyperparameter values.  A step then keeps
its numba state and only refreshes what depends on them
(``steps.base.PartitionStep._state_at``: the kernel model repacked from the
changed values, ``state.refresh_all`` refilling the K occupied clusters'
predictive caches, O(K c)); it rebuilds the state from the labels (O(n s))
only for labels it did not write.  This script measures one
``step.step(point)`` call, fed its own output as ``pm.sample`` does, three ways:

* ``fixed``: the hyperparameters as they were at the last call (the cost of a
  draw with constant hyperparameters);
* ``changing``: every learned hyperparameter moved a little before each call
  (what the step pays when NUTS moves them);
* ``rebuild``: the step's kept state dropped before each call, so it rebuilds
  from ``z`` (what every draw would cost without the refresh).

The timings are taken round-robin in blocks (``--block`` draws each) and the
medians of the block means reported, in milliseconds per draw; the refresh
overhead is ``changing - fixed``.  Models: the wine data (178 x 13) with the
learned Normal-inverse-Wishart default and, for the nonconjugate steps,
``NormalMixture`` (``k_max = 30``); the binarised digits (1797 x 64) with the
learned Beta-Bernoulli default; a DP prior with ``alpha = 1``.  The
population step (ARM) runs one chain of a population of three, with
``hyperparameters=None`` (its slice sampler is not the partition step).

Run:  python benchmarks/learned_priors_cost.py [--rounds 5] [--block 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pymc as pm
from sklearn.datasets import load_digits, load_wine

import pymc_partitions as pmp

def datasets():
    wine = load_wine().data
    digits = (load_digits().data >= 8).astype(float)
    return {"wine": wine, "digits-binary": digits}


def model_for(name, data, parametric=False):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(data))
        if parametric:
            pmp.NormalMixture.with_default_priors("x", partition=z, observed=data, k_max=30)
        elif name == "wine":
            pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=data)
        else:
            pmp.BetaBernoulliMixture.with_default_priors("x", partition=z, observed=data)
    return model


ADDITIVE_STEPS = {
    "GibbsStep": lambda z: pmp.GibbsStep(z),
    "SplitMergeStep": lambda z: pmp.SplitMergeStep(z),
    "MinHashSplitMergeStep": lambda z: pmp.MinHashSplitMergeStep(z, gibbs_sweep=True),
    "TreeGuidedStep": lambda z: pmp.TreeGuidedStep(z),
    "HybridDPStep": lambda z: pmp.HybridDPStep(z),
    "SubClusterSplitMergeStep": lambda z: pmp.SubClusterSplitMergeStep(z),
    "ARMStep": lambda z: pmp.ARMStep(z, hyperparameters=None),
}
PARAMETRIC_STEPS = {
    "GibbsStep (alg. 8)": lambda v: pmp.GibbsStep(v, n_auxiliary=2),
    "IncrementalMetropolisStep": lambda v: pmp.IncrementalMetropolisStep(v),
    "NonconjugateSplitMergeStep": lambda v: pmp.NonconjugateSplitMergeStep(v),
}


class Runner:
    """One step on one model, fed its own output; the population of a population step linked by hand."""

    def __init__(self, model, make_step, parametric, seed):
        self.model = model
        with model:
            variables = [model["z"], model["x_mu"], model["x_tau"]] if parametric else model["z"]
            self.step = make_step(variables)
        self.step.set_rng(np.random.default_rng(seed))
        self.step.stop_tuning()
        self.point = model.initial_point()
        owned = {var.name for var in self.step.vars}  # z, and mu and tau for the nonconjugate steps
        self.hyper = [var.name for var in model.value_vars if var.name not in owned]
        self.population = None
        if hasattr(self.step, "link_population"):
            self.population = [dict(self.point) for _ in range(3)]
            self.step.link_population(self.population, 0)
        self.sign = 1.0

    def draw(self, mode):
        if mode == "changing":
            self.point = dict(self.point)
            for name in self.hyper:  # a small move of every learned hyperparameter, back and forth
                self.point[name] = self.point[name] + self.sign * 1e-3
            self.sign = -self.sign
        elif mode == "rebuild":
            self.step.kept = None
        self.point, _ = self.step.step(self.point)
        if self.population is not None:
            self.population[0] = self.point

    def block(self, mode, size):
        start = time.perf_counter()
        for _ in range(size):
            self.draw(mode)
        return (time.perf_counter() - start) / size * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=30, help="draws before timing (compilation, K settles)")
    args = parser.parse_args()
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print("ms per step.step(point) call, median of block means; refresh = changing - fixed")
    print()
    header = ["data", "model", "step", "K", "fixed", "changing", "rebuild", "refresh"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    cases = [(name, data, False, ADDITIVE_STEPS) for name, data in datasets().items()]
    cases.append(("wine", datasets()["wine"], True, PARAMETRIC_STEPS))
    for name, data, parametric, steps in cases:
        family = "NormalMixture" if parametric else ("NIW" if name == "wine" else "Beta-Bernoulli")
        for step_name, make_step in steps.items():
            runner = Runner(model_for(name, data, parametric), make_step, parametric, seed=1)
            for _ in range(args.warmup):
                runner.draw("changing")
            times = {mode: [] for mode in ("fixed", "changing", "rebuild")}
            for _ in range(args.rounds):
                for mode in times:
                    times[mode].append(runner.block(mode, args.block))
            median = {mode: float(np.median(values)) for mode, values in times.items()}
            k = int(np.max(runner.point["z"])) + 1
            row = [name, family, step_name, str(k)] + [f"{median[m]:.2f}" for m in times]
            row.append(f"{median['changing'] - median['fixed']:+.2f}")
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
