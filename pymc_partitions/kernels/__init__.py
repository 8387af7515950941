"""Numba kernels, one module per algorithm: pure functions of (model, state, rng), each sampler a ``protocol.Kernel``."""
