"""The race: a new user's time to the planted partition with ``pm.sample``, from its default start (issue #30, item 5).

A DP mixture, ``alpha ~ Gamma(1, 1)`` moved by PyMC's NUTS in the same
``pm.sample`` (``--alpha fixed`` fixes it at 1 instead), the likelihood with
its ``default_hyperparameters(X)``, planted clusters, and one chain:
``pm.sample(step=..., tune=0, draws=<many>, chains=1, cores=1,
var_names=["alpha"], callback=...)`` from PyMC's default start (every item
in one cluster; no initial partition is passed).  ``z`` stays out of the
trace, as at large n it should (``docs/benchmarks.md``).  The callback stamps
the wall time since ``pm.sample`` was called at every draw and, ``--every``
seconds or 10 % of the elapsed time after the last measurement, whichever is
longer (not every draw: it costs O(n)), measures the current partition: its NMI to the planted labels (scikit-learn's
``normalized_mutual_info_score``), its number of clusters and its log joint
``log p(z | alpha = 1) + log p(X | z)`` -- the model's own log density
(``model.compile_logp`` of the partition and the observations, at
``alpha = 1`` whatever the chain's ``alpha``, so that every sampler and the
planted partition are scored by the same function).  The time the
measurements take is subtracted from every later stamp (column
``measuring``), and the callback stops the run with ``KeyboardInterrupt``
(how a PyMC user stops sampling: ``pm.sample`` keeps the draws so far) once
the budget is spent, or ``--linger`` seconds after the first measurement
within both targets below.

Sizes (``--sizes``): (a) n = 10^5, D = 8, 10 clusters; (b) n = 10^6, D = 8;
(c) n = 10^6, D = 32 -- ``NormalGammaMixture``, centres N(0, 10^2 I), unit
noise, equal expected sizes; (d) n = 10^5, D = 128, 75 clusters of unequal
sizes (Dirichlet(1) weights), "embedding-like": centres N(0, I), each
cluster with its own full covariance 0.1 (B Bᵀ / D + I / 2), B standard
normal, under ``NormalInverseWishartMixture``; (e) n = 200,000, D = 128,
20 clusters, the anchor's workload: DPMMSubClusters.jl's
``generate_gaussian_data`` recipe with dpmmpython's example setting
(:func:`dpmm_gaussian`: Dirichlet(1) weights, centres N(0, 0.1 I), covariances
InverseWishart(D + 2, I)), under ``NormalInverseWishartMixture``; dpmmpython
reports 481 s (1 process) and 321 s (4) for 200 iterations on it.
``--n d=20000`` runs a size at another n.

Samplers (``--samplers``): ``subcluster`` (``SubClusterSplitMergeStep``, on
2 numba threads), ``hybrid_proposals`` (``HybridDPStep(n_proposals=10)``:
the sub-cluster proposals before each hybrid iteration; skipped, saying so,
where the step does not accept ``n_proposals``), ``split_merge``, ``gibbs``,
``hybrid`` (``HybridDPStep``), all with their default options otherwise, and
``sklearn``: scikit-learn's
``BayesianGaussianMixture`` (variational DP mixture, k-means start,
``n_components`` = 2 x planted, ``covariance_type="diag"`` against the
Normal-Gamma and ``"full"`` against the Normal-inverse-Wishart, its other
options at their defaults), fitted in chunks of EM iterations with
``warm_start`` so that its labels (``fit_predict``) can be scored during the
fit by the same measurement; it stops when it converges (``tol = 1e-3``), at
the budget or after its targets, at the end of a chunk.  ``--threads-size`` adds ``subcluster`` on 1 numba thread at
that size, ``--dask-size`` ``SubClusterSplitMergeStep(z, backend=client)``
on a ``distributed.LocalCluster`` of 1 worker (2 threads) and of 2 workers
(1 thread each); it is skipped, saying so, where the step does not accept
``backend``.  The sub-cluster rows run first, each for the size's budget;
with ``--decide F`` (default 3) every other row runs for F times the
sub-cluster step's time to NMI 0.99 (at least 30 s, at most the budget):
long enough to decide the targets "a third of ``SplitMergeStep``'s time"
and "ahead of scikit-learn", not to show where the slower samplers end.

Every sampler runs in a fresh process (``NUMBA_CACHE_DIR`` shared, so after
the first run the kernels load from the cache), which first runs the same
step for 2 draws on the first 40,000 items and 8 features (compiling, or
loading, the kernels and their threaded passes: ``warm-up``), then the race.  Reported
per sampler: ``first draw`` (from the call to the first draw: PyMC's set-up,
the model's compilation, the step's first iteration), time to NMI >= 0.99
and to a log joint within 1 % of the planted partition's (LJ >= LJ_planted -
0.01 |LJ_planted|: a partition the model prefers to the planted one counts), both at the first measurement that shows it (so at
most ``--every`` seconds or 10 % plus one draw late), ``per iteration`` (median time
between draws from the fourth draw on, NUTS included) and ``step`` (the
partition step's own median), iterations in the budget, NMI and K at the
end, peak resident memory of the process (``ru_maxrss``: the data, the
warm-up, PyTensor's functions and the trace included; Dask rows add the
largest worker's), the total measuring time subtracted, and the machine's
1-minute load average during the run (mean of the measurements).  Plots:
NMI, and the relative gap to the planted log joint (symmetric log scale:
below 0 the chain's partition has the higher log joint), against
seconds, one line per sampler, in ``docs/figures/subcluster_race_<size>.png``.

Run:  python benchmarks/subcluster.py [--sizes a,b,c,d,e]
          [--samplers subcluster,hybrid_proposals,split_merge,gibbs,hybrid,sklearn] [--budget a=150,b=300,c=300,d=300,e=400]
          [--n d=20000] [--threads-size b] [--dask-size b] [--every 2] [--linger 10] [--decide 3] [--alpha gamma|fixed]
          [--seed 1] [--quick] [--no-plots]
(from a checkout's root; ``--quick``: n = 20,000 at every size, D = 32 at (d), 20 s budgets)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIZES = {
    "a": {"n": 100_000, "d": 8, "k": 10, "family": "normal_gamma", "budget": 150.0},
    "b": {"n": 1_000_000, "d": 8, "k": 10, "family": "normal_gamma", "budget": 300.0},
    "c": {"n": 1_000_000, "d": 32, "k": 10, "family": "normal_gamma", "budget": 300.0},
    "d": {"n": 100_000, "d": 128, "k": 75, "family": "normal_inverse_wishart", "budget": 300.0},
    "e": {"n": 200_000, "d": 128, "k": 20, "family": "normal_inverse_wishart", "budget": 400.0, "generator": "dpmm"},
}
DPMM_MEAN_VARIANCE = 0.1
"""Variance of the centres of size (e): the ``var_scale`` of dpmmpython's 200,000 x 128-D example."""
QUICK = {"n": 20_000, "budget": 20.0, "d_at_d": 32}
SAMPLERS = ["subcluster", "hybrid_proposals", "split_merge", "gibbs", "hybrid", "sklearn"]
STEPS = {
    "subcluster": "SubClusterSplitMergeStep",
    "split_merge": "SplitMergeStep",
    "gibbs": "GibbsStep",
    "hybrid": "HybridDPStep",
}
LABELS = {
    "subcluster": "SubClusterSplitMergeStep",
    "subcluster_1thread": "SubClusterSplitMergeStep, 1 thread",
    "subcluster_dask1": "SubClusterSplitMergeStep, Dask 1 worker",
    "subcluster_dask2": "SubClusterSplitMergeStep, Dask 2 workers",
    "split_merge": "SplitMergeStep",
    "gibbs": "GibbsStep",
    "hybrid": "HybridDPStep",
    "hybrid_proposals": "HybridDPStep(n_proposals=10)",
    "sklearn": "scikit-learn BayesianGaussianMixture",
}
HYBRID_PROPOSALS = 10
"""``n_proposals`` of the ``hybrid_proposals`` row: the sub-cluster step's default."""
SUBCLUSTER_ROWS = ("subcluster", "subcluster_1thread", "subcluster_dask1", "subcluster_dask2", "hybrid_proposals")
"""Rows that run to their budget (or their targets); the others may get less (``--decide``)."""
WARM_ITEMS = 40_000
"""Items of the warm-up run: twice ``kernels.twofold.PARALLEL_MIN_ITEMS``, so that the threaded passes compile too."""
WARM_FEATURES = 8
"""Features of the warm-up run: numba compiles per family and array type, not per D, and at D = 128 a warm-up on
all features would cost a minute of sampling."""
NMI_TARGET = 0.99
LJ_TARGET = 0.01
DECIDE_MIN = 30.0
"""Seconds a row that is not a sub-cluster step runs at least under ``--decide``."""


# -- data -------------------------------------------------------------------------------------------------


def planted(size, seed=0):
    """``(X, truth)`` of a size (its ``n``, ``d``, ``k``, family and generator); the data's seed is fixed."""
    rng = np.random.default_rng(seed)
    n, d, k = size["n"], size["d"], size["k"]
    if size.get("generator") == "dpmm":
        return dpmm_gaussian(n, d, k, DPMM_MEAN_VARIANCE, rng)
    if size["family"] == "normal_gamma":
        centres = rng.normal(0.0, 10.0, (k, d))
        truth = rng.integers(0, k, n)
        return centres[truth] + rng.normal(0.0, 1.0, (n, d)), truth
    weights = rng.dirichlet(np.ones(k))
    truth = rng.choice(k, size=n, p=weights)
    centres = rng.normal(0.0, 1.0, (k, d))
    x = np.empty((n, d))
    for c in range(k):
        members = np.flatnonzero(truth == c)
        b = rng.normal(size=(d, d))
        chol = np.linalg.cholesky(0.1 * (b @ b.T / d + 0.5 * np.eye(d)))
        x[members] = centres[c] + rng.normal(size=(members.size, d)) @ chol.T
    return x, truth


def dpmm_gaussian(n, d, k, mean_variance, rng):
    """``(X, truth)`` drawn by the recipe of DPMMSubClusters.jl's ``generate_gaussian_data(N, D, K, MixtureVar)``.

    The recipe (``src/data_generators.jl`` of BGU-CS-VIL/DPMMSubClusters.jl, which dpmmpython's
    ``DPMMPython.generate_gaussian_data`` calls; its example ``examples/multi_process.ipynb`` draws
    ``N = 200,000``, ``D = 128``, ``K = 20`` with ``var_scale = 0.1`` and reports 481 s and 321 s for 200
    iterations), written here anew::

        π ~ Dirichlet(1_K),   (n_1, ..., n_K) ~ Multinomial(N, π),
        μ_c ~ N(0, MixtureVar I_D),   Σ_c ~ InverseWishart(D + 2, I_D)   (mean I_D),
        x_i ~ N(μ_c, Σ_c) for the n_c items of cluster c, which are contiguous (cluster 0 first).

    ``InverseWishart(ν, Ψ)`` is Distributions.jl's, the same parametrisation as scipy's
    ``invwishart(df=ν, scale=Ψ)``: ``Σ⁻¹ ~ Wishart(ν, Ψ⁻¹)``, mean ``Ψ / (ν − D − 1)``.  The random numbers
    are numpy's, so the draws differ from Julia's; the law is the same.
    """
    from scipy import stats

    if n < 1 or d < 1 or k < 1 or not mean_variance > 0.0:
        raise ValueError(f"dpmm_gaussian needs n, d, k >= 1 and mean_variance > 0; got {n}, {d}, {k}, {mean_variance}")
    counts = rng.multinomial(n, rng.dirichlet(np.ones(k)))
    truth = np.repeat(np.arange(k), counts)
    x = np.empty((n, d))
    start = 0
    for c in range(k):
        centre = rng.normal(0.0, np.sqrt(mean_variance), d)
        covariance = stats.invwishart(df=d + 2, scale=np.eye(d)).rvs(random_state=rng)
        chol = np.linalg.cholesky(np.atleast_2d(covariance))
        x[start : start + counts[c]] = centre + rng.normal(size=(counts[c], d)) @ chol.T
        start += counts[c]
    return x, truth


# -- the child: one sampler at one size, in a fresh process -------------------------------------------------


def build_model(x, family, alpha_prior):
    import pymc as pm

    import pymc_partitions as pmp

    mixture = pmp.NormalGammaMixture if family == "normal_gamma" else pmp.NormalInverseWishartMixture
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 1.0, 1.0) if alpha_prior == "gamma" else 1.0
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(x))
        mixture("x", partition=z, observed=x, **mixture.default_hyperparameters(x))
    return model


class Scorer:
    """NMI to the planted labels, K and the log joint at ``alpha = 1`` of a label vector (the model's logp)."""

    def __init__(self, model, truth):
        from sklearn.metrics import normalized_mutual_info_score

        self.nmi = normalized_mutual_info_score
        self.truth = truth
        self.logp = model.compile_logp(vars=[model["z"], model["x"]])
        self.point = {v.name: np.zeros(()) for v in model.value_vars if v.name != "z"}  # alpha_log__ = 0

    def __call__(self, labels):
        from pymc_partitions import relabel

        z = relabel(np.asarray(labels)).astype(np.int64)
        return (
            float(self.nmi(self.truth, z)), int(z.max()) + 1, float(self.logp({**self.point, "z": z})),
        )


class Recorder:
    """``pm.sample``'s callback: stamps every draw, measures on a schedule, stops at the budget or after the targets.

    A measurement comes ``every`` seconds after the last one, or 10 % of the elapsed time when that is longer
    (so a time to target is at most that much late); once the partition is within both targets the run goes
    on for ``linger`` seconds and stops.
    """

    def __init__(self, scorer, planted_lj, budget, every, linger):
        self.scorer, self.planted_lj, self.budget, self.every, self.linger = scorer, planted_lj, budget, every, linger
        self.start = None
        self.overhead = 0.0
        self.stamps, self.rows = [], []
        self.next_measure = 0.0
        self.stop = budget

    def elapsed(self, now):
        return now - self.start - self.overhead

    def measure(self, now, draws, labels):
        t = self.elapsed(now)
        nmi, k, lj = self.scorer(labels)
        self.rows.append((t, draws, k, nmi, lj, os.getloadavg()[0]))
        self.next_measure = t + max(self.every, 0.1 * t)
        if self.stop == self.budget and on_target(nmi, lj, self.planted_lj):
            self.stop = min(self.budget, t + self.linger)
        self.overhead += time.perf_counter() - now

    def __call__(self, trace, draw):
        now = time.perf_counter()
        t = self.elapsed(now)
        self.stamps.append(t)
        if t >= self.next_measure or t >= self.stop:
            self.measure(now, draw.draw_idx + 1, draw.point["z"])
        if t >= self.stop:
            raise KeyboardInterrupt  # pm.sample stops and returns the draws so far


def on_target(nmi, lj, planted_lj):
    """NMI at least ``NMI_TARGET`` and the log joint within ``LJ_TARGET`` (relative) of the planted partition's."""
    return nmi >= NMI_TARGET and lj_reached(lj, planted_lj)


def lj_reached(lj, planted_lj):
    """The log joint is at most ``LJ_TARGET |LJ_planted|`` below the planted partition's (or above it)."""
    return lj >= planted_lj - LJ_TARGET * abs(planted_lj)


def make_step(sampler, z, backend):
    import pymc_partitions as pmp

    name = "subcluster" if sampler.startswith("subcluster") else sampler
    options = {} if backend is None else {"backend": backend}
    if name == "hybrid_proposals":
        name, options["n_proposals"] = "hybrid", HYBRID_PROPOSALS
    return getattr(pmp, STEPS[name])(z, **options)


def run_pymc(job, x, truth):
    import pymc as pm

    backend, cluster = None, None
    if job["sampler"].startswith("subcluster_dask"):
        from distributed import Client, LocalCluster

        workers = int(job["sampler"][-1])
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=2 // workers, processes=True, dashboard_address=None,
            env={"NUMBA_NUM_THREADS": str(2 // workers)},
        )
        backend = Client(cluster)
    try:
        warm_x = np.ascontiguousarray(x[: job["warm"], :WARM_FEATURES])  # C-contiguous, as the data: the same types
        with build_model(warm_x, job["family"], job["alpha"]) as warm_model:
            try:
                step = make_step(job["sampler"], warm_model["z"], backend)
            except TypeError as err:
                for option in ("backend", "n_proposals"):
                    if option in str(err):
                        return {"skipped": f"{option}= is not accepted on this tree ({err})"}
                raise
            start = time.perf_counter()
            pm.sample(step=step, tune=0, draws=2, chains=1, cores=1, progressbar=False, random_seed=job["seed"],
                      var_names=_trace_vars(job), compute_convergence_checks=False)
            warm_up = time.perf_counter() - start
        model = build_model(x, job["family"], job["alpha"])
        scorer = Scorer(model, truth)
        planted_lj = scorer(truth)[2]
        recorder = Recorder(scorer, planted_lj, job["budget"], job["every"], job["linger"])
        with model:
            step = make_step(job["sampler"], model["z"], backend)
            step_times = []
            partition_step = step.step

            def timed_step(point):
                begin = time.perf_counter()
                result = partition_step(point)
                step_times.append(time.perf_counter() - begin)
                return result

            step.step = timed_step
            draws = int(job["budget"] * 1000) + 100  # more than the budget allows: the callback stops the run
            recorder.start = time.perf_counter()
            pm.sample(step=step, tune=0, draws=draws, chains=1, cores=1, progressbar=False, random_seed=job["seed"],
                      var_names=_trace_vars(job), compute_convergence_checks=False, callback=recorder)
            total = time.perf_counter() - recorder.start
        result = {
            "warm_up": warm_up,
            "first_draw": recorder.stamps[0],
            "iterations": len(recorder.stamps),
            "per_iteration": _median(np.diff(recorder.stamps[3:])),
            "step": _median(step_times[3:]),
            "rows": recorder.rows,
            "planted_lj": planted_lj,
            "measuring": recorder.overhead,
            "wall": total,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    finally:
        if backend is not None:
            backend.close()
            cluster.close()
    if backend is not None:
        result["worker_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return result


def _trace_vars(job):
    return ["alpha"] if job["alpha"] == "gamma" else None


def run_sklearn(job, x, truth):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import BayesianGaussianMixture

    scorer = Scorer(build_model(x, job["family"], job["alpha"]), truth)
    planted_lj = scorer(truth)[2]
    mixture = BayesianGaussianMixture(
        n_components=2 * job["k"], covariance_type="diag" if job["family"] == "normal_gamma" else "full",
        weight_concentration_prior_type="dirichlet_process", max_iter=1, warm_start=True, random_state=job["seed"],
    )
    recorder = Recorder(scorer, planted_lj, job["budget"], job["every"], job["linger"])
    calls, chunk, iterations = [], 1, 0
    recorder.start = time.perf_counter()
    while True:
        begin = time.perf_counter()
        mixture.set_params(max_iter=chunk)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            labels = mixture.fit_predict(x)  # chunk EM iterations (the first call: k-means start) and one E-step
        now = time.perf_counter()
        iterations += mixture.n_iter_
        recorder.stamps.append(recorder.elapsed(now))
        calls.append(((now - begin) / mixture.n_iter_, mixture.n_iter_))
        recorder.measure(now, iterations, labels)
        if mixture.converged_ or recorder.rows[-1][0] >= recorder.stop:
            break
        chunk = max(1, int((recorder.next_measure - recorder.rows[-1][0]) / calls[-1][0])) if len(calls) > 1 else 1
    return {
        "warm_up": 0.0,
        "first_draw": recorder.stamps[0],
        "iterations": iterations,
        "per_iteration": _median([c[0] for c in calls[1:]]),
        "step": None,
        "rows": recorder.rows,
        "planted_lj": planted_lj,
        "measuring": recorder.overhead,
        "wall": time.perf_counter() - recorder.start,
        "converged": bool(mixture.converged_),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _median(values):
    values = list(values)
    return float(np.median(values)) if values else None


def child(job):
    import logging

    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)  # tune=0: PyMC's note that NUTS is not tuned
    x, truth = planted(job)
    result = run_sklearn(job, x, truth) if job["sampler"] == "sklearn" else run_pymc(job, x, truth)
    print(json.dumps(result))


# -- the parent: the runs, the tables, the plots -------------------------------------------------------------


def run_child(job):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    if job["sampler"] == "subcluster_1thread":
        env["NUMBA_NUM_THREADS"] = "1"
    start_load = os.getloadavg()[0]
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", json.dumps(job)], capture_output=True, text=True, env=env,
    )
    if proc.returncode != 0:
        return {"error": proc.stderr[-3000:]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["load_start"] = start_load
    return result


def first_time(rows, test):
    for t, _, _, nmi, lj, _ in rows:
        if test(nmi, lj):
            return t
    return None


def summary(result):
    """The table's numbers of one run."""
    rows, planted_lj = result["rows"], result["planted_lj"]
    t_nmi = first_time(rows, lambda nmi, lj: nmi >= NMI_TARGET)
    t_lj = first_time(rows, lambda nmi, lj: lj_reached(lj, planted_lj))
    last = rows[-1]
    return {
        "t_nmi": t_nmi, "t_lj": t_lj, "final_nmi": last[3], "final_k": last[2], "end": last[0],
        "load": float(np.mean([r[5] for r in rows] + [result["load_start"]])),
    }


def _seconds(value, end):
    return f"{value:.1f}" if value is not None else f"not in {end:.0f}"


def print_table(key, size, results):
    print(f"\n### ({key}) n = {size['n']:,}, D = {size['d']}, {size['k']} planted clusters, "
          f"{'Normal-Gamma' if size['family'] == 'normal_gamma' else 'Normal-inverse-Wishart'}, "
          f"budget {size['budget']:.0f} s\n")
    print(f"planted partition's log joint (alpha = 1): {next(iter(r['planted_lj'] for r in results.values() if 'rows' in r), float('nan')):.1f}\n")
    header = ["sampler", "warm-up [s]", "first draw [s]", f"NMI {NMI_TARGET} at [s]", "LJ within 1 % at [s]",
              "per iteration [s]", "step [s]", "iterations", "final NMI", "final K", "peak RSS [MB]",
              "measuring [s]", "load"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, result in results.items():
        if "rows" not in result:
            reason = result.get("skipped") or "failed: " + result["error"].strip().splitlines()[-1]
            print(f"| {LABELS[name]} | {reason} |" + " |" * (len(header) - 2))
            continue
        s = summary(result)
        rss = f"{result['peak_rss_mb']:.0f}"
        if "worker_peak_rss_mb" in result:
            rss += f" (+ worker {result['worker_peak_rss_mb']:.0f})"
        step = "-" if result["step"] is None else f"{result['step']:.3f}"
        per = "-" if result["per_iteration"] is None else f"{result['per_iteration']:.3f}"
        first = f"{result['first_draw']:.1f}"
        label = LABELS[name] + (" (converged)" if result.get("converged") else "")
        print(f"| {label} | {result['warm_up']:.1f} | {first} | {_seconds(s['t_nmi'], s['end'])} | "
              f"{_seconds(s['t_lj'], s['end'])} | {per} | {step} | {result['iterations']} | {s['final_nmi']:.3f} | "
              f"{s['final_k']} | {rss} | {result['measuring']:.1f} | {s['load']:.1f} |")
    ok = {name: summary(r) for name, r in results.items() if "rows" in r}
    if "subcluster" in ok:
        mine = ok["subcluster"]["t_nmi"]
        for other in ("split_merge", "sklearn"):
            if other in ok and mine is not None:
                theirs = ok[other]["t_nmi"]
                ratio = f"{mine / theirs:.2f}" if theirs else f"< {mine / ok[other]['end']:.2f} (not reached)"
                print(f"\nSubClusterSplitMergeStep's time to NMI {NMI_TARGET} / {LABELS[other]}'s: {ratio}")
    sys.stdout.flush()


def plot(key, size, results, directory):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_nmi, ax_lj) = plt.subplots(1, 2, figsize=(11, 4))
    for name, result in results.items():
        if "rows" not in result:
            continue
        rows = np.array([r[:5] for r in result["rows"]], dtype=float)
        style = "--" if name.startswith("subcluster_") else "-"
        ax_nmi.plot(rows[:, 0], rows[:, 3], style, marker=".", label=LABELS[name])
        gap = (result["planted_lj"] - rows[:, 4]) / abs(result["planted_lj"])
        ax_lj.plot(rows[:, 0], gap, style, marker=".", label=LABELS[name])
    ax_nmi.axhline(NMI_TARGET, color="grey", lw=0.8)
    ax_lj.axhline(LJ_TARGET, color="grey", lw=0.8)
    ax_lj.set_yscale("symlog", linthresh=1e-4)  # below 0: a log joint above the planted partition's
    ax_nmi.set(xlabel="seconds since pm.sample was called", ylabel="NMI to the planted labels")
    ax_lj.set(xlabel="seconds since pm.sample was called", ylabel="(LJ planted - LJ) / |LJ planted|")
    ax_nmi.legend(fontsize=8)
    fig.suptitle(f"({key}) n = {size['n']:,}, D = {size['d']}, {size['k']} planted clusters")
    fig.tight_layout()
    path = os.path.join(directory, f"subcluster_race_{key}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"\nplot: {os.path.relpath(path, ROOT)}")


def parse_sizes(text):
    """``{"a": 150.0, ...}`` of ``"a=150,..."``."""
    values = {}
    for item in filter(None, (text or "").split(",")):
        key, value = item.split("=")
        values[key] = float(value)
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="a,b,c,d")
    parser.add_argument("--samplers", default=",".join(SAMPLERS))
    parser.add_argument("--budget", default="", help="seconds per sampler, e.g. a=150,b=300 (defaults 150, 300)")
    parser.add_argument("--n", default="", help="items at a size instead of its default, e.g. d=20000")
    parser.add_argument("--threads-size", default="b", help="size of the 1-thread row ('' for none)")
    parser.add_argument("--dask-size", default="b", help="size of the Dask rows ('' for none)")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between measurements (at least)")
    parser.add_argument("--linger", type=float, default=10.0, help="seconds a run goes on once within both targets")
    parser.add_argument("--decide", type=float, default=3.0,
                        help="the rows that are not sub-cluster steps run for this many times the sub-cluster step's "
                             "time to NMI 0.99 (at least 30 s, at most the budget); 0: the budget")
    parser.add_argument("--alpha", choices=["gamma", "fixed"], default="gamma")
    parser.add_argument("--seed", type=int, default=1, help="the samplers' random seed (the data's is fixed)")
    parser.add_argument("--quick", action="store_true", help="n = 20,000, D <= 32, 20 s budgets: for developing")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    print(f"at {commit.strip()}; {os.cpu_count()} cores; 1-minute load average at the start: {os.getloadavg()[0]:.1f}; "
          f"alpha: {'Gamma(1, 1), NUTS' if args.alpha == 'gamma' else 'fixed at 1'}; measurements every {args.every} s")
    budgets, items = parse_sizes(args.budget), parse_sizes(args.n)
    samplers = args.samplers.split(",")
    for key in args.sizes.split(","):
        size = dict(SIZES[key])
        if args.quick:
            size["n"], size["budget"] = QUICK["n"], QUICK["budget"]
            size["d"] = min(size["d"], QUICK["d_at_d"])
        size["budget"] = budgets.get(key, size["budget"])
        size["n"] = int(items.get(key, size["n"]))
        names = list(samplers)
        if "subcluster" in samplers:
            extra = ["subcluster_1thread"] if key == args.threads_size else []
            extra += ["subcluster_dask1", "subcluster_dask2"] if key == args.dask_size else []
            names[names.index("subcluster") + 1:names.index("subcluster") + 1] = extra
        names.sort(key=lambda name: name not in SUBCLUSTER_ROWS)  # stable: the sub-cluster rows first
        results = {}
        for name in names:
            budget = size["budget"]
            if args.decide and name not in SUBCLUSTER_ROWS and "rows" in results.get("subcluster", {}):
                reached = summary(results["subcluster"])["t_nmi"]
                if reached is not None:
                    budget = min(budget, max(DECIDE_MIN, args.decide * reached))
            job = {**size, "budget": budget, "sampler": name, "warm": min(size["n"], WARM_ITEMS),
                   "every": args.every, "linger": args.linger, "alpha": args.alpha, "seed": args.seed}
            results[name] = run_child(job)
            if "skipped" in results[name]:
                print(f"({key}) {LABELS[name]}: skipped -- {results[name]['skipped']}")
            elif "error" in results[name]:
                print(f"({key}) {LABELS[name]}: failed\n{results[name]['error']}")
            sys.stdout.flush()
        print_table(key, size, results)
        if not args.no_plots:
            plot(key, size, results, os.path.join(ROOT, "docs", "figures"))


if __name__ == "__main__":
    main()
