"""Time to a new user's first draw: each step method's first ``pm.sample`` in a fresh process with an empty numba cache.

For each step method a fresh Python process with an empty ``NUMBA_CACHE_DIR``
imports the package, builds a small model -- a DP mixture of 200 items,
Normal-Gamma likelihood, ``alpha ~ Gamma(1, 1)`` moved by PyMC (NUTS; the
population steps' own slice sampler) -- and calls ``pm.sample(draws=1,
tune=0)`` (population steps: 3 chains, the smallest population).  The
``nonconjugate_gibbs``, ``incremental`` and ``nonconjugate_split_merge`` rows
replace the likelihood by a ``NormalMixture`` with ``mu``, ``tau`` of shape
(20, 2) and run ``GibbsStep`` (Algorithm 8), ``IncrementalMetropolisStep`` and
``NonconjugateSplitMergeStep``; the ``component_gibbs`` and
``component_split_merge`` rows write the same model in plain PyMC
(``pm.Normal("x", mu[z], 1 / pm.math.sqrt(tau[z]), observed=X)``, a
component model) and run ``GibbsStep`` and ``NonconjugateSplitMergeStep``
on it.  It reports

* ``import package``: ``import pymc_partitions`` alone (the numba layers load on demand, PyMC is not imported);
* ``import``: that, ``import pymc`` and the first public name (the PyMC layer);
* ``first pm.sample``: the whole first call, numba compilation included;
* ``CPU``: the CPU time of that call, which on a busy machine stays close to
  what the call takes on an idle one (the wall time does not);
* ``numba compile``: the part of it spent compiling (numba's compile events);
* ``second pm.sample``: the same call again in the same process (no compilation),
  so the rest of the first call is PyMC's and PyTensor's own set-up;
* ``warm cache``: the first ``pm.sample`` of a second fresh process that finds the
  numba cache the first one filled.

PyTensor's compiled C code is cached in ``~/.pytensor`` as usual (a user's
very first PyMC model compiles it once, for every PyMC model alike).  The
median over ``--repeats`` fresh processes is printed with the range.

``--profile N`` also lists the N functions whose compilation took longest
in the first repeat's cold process (each without its callees' time: numba's
compile events, nested).

Run:  python benchmarks/first_draw.py [--repeats 3] [--steps gibbs split_merge ...] [--step-code name=expression ...]
      [--profile N]
(from a checkout's root: the child processes import the package from the current directory)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

STEPS = {
    "gibbs": "pmp.GibbsStep(z)",
    "split_merge": "pmp.SplitMergeStep(z)",
    "past_states": "pmp.PastStatesSplitMergeStep(z)",
    "arm": "pmp.ARMStep(z)",
    "minsm": "pmp.MinHashSplitMergeStep(z)",
    "tgmcmc": "pmp.TreeGuidedStep(z)",
    "hybrid": "pmp.HybridDPStep(z)",
    "subcluster": "pmp.SubClusterSplitMergeStep(z)",
    "nonconjugate_gibbs": "pmp.GibbsStep(z)",
    "incremental": "pmp.IncrementalMetropolisStep(z)",
    "nonconjugate_split_merge": "pmp.NonconjugateSplitMergeStep(z)",
    "component_gibbs": "pmp.GibbsStep(z)",
    "component_split_merge": "pmp.NonconjugateSplitMergeStep(z)",
}
"""Every step method (``--steps`` picks some); ``--step-code name=expression`` replaces one's expression, e.g. to
time an older tree whose API differs (``past_states=pmp.SplitMergeStep(z, init='past_states')``)."""
CHAINS = {name: 3 if name in ("arm", "past_states") else 1 for name in STEPS}
"""Population steps run 3 chains, the smallest population."""
CONJUGATE = 'pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)'
NONCONJUGATE = (
    'pmp.NormalMixture("x", partition=z, mu=pm.Normal("mu", 0.0, 5.0, shape=(20, 2)), '
    'tau=pm.Gamma("tau", 2.0, 2.0, shape=(20, 2)), observed=X)'
)
COMPONENT = (
    'pm.Normal("x", pm.Normal("mu", 0.0, 5.0, shape=(20, 2))[z], '
    '1.0 / pm.math.sqrt(pm.Gamma("tau", 2.0, 2.0, shape=(20, 2))[z]), observed=X)'
)

CHILD = """
import json, sys, time
start = time.perf_counter()
import pymc_partitions as pmp
package = time.perf_counter() - start
assert "pymc" not in sys.modules
import numpy as np
import pymc as pm
from numba.core import event

pmp.GibbsStep  # the PyMC layer
imported = time.perf_counter() - start

class CompileTime(event.Listener):
    def __init__(self):
        self.depth, self.started, self.total = 0, 0.0, 0.0
        self.stack, self.own = [], {}  # each function's compile time without its callees' (--profile)
    def on_start(self, ev):
        if self.depth == 0:
            self.started = time.perf_counter()
        self.depth += 1
        self.stack.append([ev.data["dispatcher"].py_func.__qualname__, time.perf_counter(), 0.0])
    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.total += time.perf_counter() - self.started
        name, started, callees = self.stack.pop()
        spent = time.perf_counter() - started
        self.own[name] = self.own.get(name, 0.0) + spent - callees
        if self.stack:
            self.stack[-1][2] += spent

listener = CompileTime()
event.register("numba:compile", listener)
rng = np.random.default_rng(0)
X = rng.normal(0.0, 1.0, (200, 2)) + 6.0 * rng.integers(0, 3, (200, 1))
with pm.Model() as model:
    alpha = pm.Gamma("alpha", 1.0, 1.0)
    z = pmp.DirichletProcessPartition("z", alpha=alpha, n=200)
    OBSERVATION
    times = []
    for _ in range(2):
        start, cpu = time.perf_counter(), time.process_time()
        pm.sample(step=STEP, draws=1, tune=0, chains=CHAINS, cores=1, progressbar=False,
                  compute_convergence_checks=False, random_seed=1)
        times.append(time.perf_counter() - start)
        if len(times) == 1:
            first_cpu = time.process_time() - cpu
profile = sorted(listener.own.items(), key=lambda item: -item[1])[:PROFILE]
print(json.dumps({"package": package, "import": imported, "first": times[0], "cpu": first_cpu, "second": times[1],
                  "compile": listener.total, "profile": profile}))
"""


def run_child(step, cache_dir, profile=0):
    if step.startswith("component"):
        observation = COMPONENT
    elif step.startswith("nonconjugate") or step == "incremental":
        observation = NONCONJUGATE
    else:
        observation = CONJUGATE
    code = textwrap.dedent(CHILD).replace("STEP", STEPS[step]).replace("CHAINS", str(CHAINS[step]))
    code = code.replace("PROFILE", str(profile))
    code = code.replace("OBSERVATION", observation)
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", nargs="+", choices=list(STEPS), default=list(STEPS))
    parser.add_argument("--step-code", nargs="*", default=[], metavar="NAME=EXPRESSION")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also print the N functions whose compilation took longest (without their callees')")
    args = parser.parse_args()
    for item in args.step_code:
        name, expression = item.split("=", 1)
        STEPS[name] = expression
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print("fresh process, empty numba cache; DP Normal-Gamma mixture, n = 200, alpha ~ Gamma(1, 1); seconds, median (min-max)")
    print()
    header = ["step", "import package", "import", "first pm.sample", "CPU", "numba compile", "second pm.sample", "warm cache"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("-" * (len(h) + 2) for h in header) + "|")
    profiles = []
    for step in args.steps:
        cold, warm = [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="pmp-first-draw-") as cache_dir:
                cold.append(run_child(step, cache_dir, args.profile))
                warm.append(run_child(step, cache_dir))

        def cell(values):
            values = np.asarray(values)
            return f"{np.median(values):.1f} ({values.min():.1f}-{values.max():.1f})"

        row = [
            step,
            cell([r["package"] for r in cold]),
            cell([r["import"] for r in cold]),
            cell([r["first"] for r in cold]),
            cell([r["cpu"] for r in cold]),
            cell([r["compile"] for r in cold]),
            cell([r["second"] for r in cold]),
            cell([r["first"] for r in warm]),
        ]
        print("| " + " | ".join(row) + " |")
        profiles.append((step, cold[0]["profile"]))
    for step, profile in profiles if args.profile else ():
        total = sum(seconds for _, seconds in profile)
        print(f"\n{step}: the {len(profile)} longest compilations of the first repeat ({total:.1f} s), without their callees'")
        for name, seconds in profile:
            print(f"  {seconds:7.2f}  {name}")


if __name__ == "__main__":
    main()
