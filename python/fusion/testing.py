"""Helpers for executed tests: fresh random inputs, tolerances per dtype,
and the check that a result matches its reference."""

import os

import numpy as np

# Relative error ||out - ref|| / ||ref|| allowed per output element type.
TOLERANCE = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2, "i1": 0.0}


def fresh_seed():
    """A fresh random seed, printed so a failure can be rerun with
    FUSION_TEST_SEED=<seed> (lit passes it through)."""
    seed = int(os.environ.get("FUSION_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
    print(f"seed {seed}")
    return seed


def fresh_rng():
    """A numpy generator from fresh_seed()."""
    return np.random.default_rng(fresh_seed())


def random_input(rng, tensor_type, shape=None, low=-2.0, high=2.0):
    """Random values of `tensor_type` (dynamic dims from `shape`); never zeros."""
    shape = shape or tuple(tensor_type.shape)
    if tensor_type.element == "i1":
        return rng.random(shape) < 0.5
    values = rng.uniform(low, high, size=shape)
    return values.astype(tensor_type.dtype)


def relative_error(out, ref):
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if np.isnan(out).any():
        return float("inf")  # poisoned (unwritten) or NaN output
    scale = np.linalg.norm(ref.ravel())
    return float(np.linalg.norm((out - ref).ravel()) / (scale if scale else 1.0))


def max_abs_error(out, ref):
    out = np.asarray(out, dtype=np.float64)
    if np.isnan(out).any():
        return float("inf")
    return float(np.max(np.abs(out - np.asarray(ref, dtype=np.float64)), initial=0.0))


def check(name, out, ref, element, failures):
    """Compares one output with its reference; records a failure line."""
    if element == "i1":
        ok = np.array_equal(np.asarray(out, bool), np.asarray(ref, bool))
        error = 0.0 if ok else 1.0
    else:
        error = relative_error(out, ref)
        ok = error <= TOLERANCE[element]
    status = "ok" if ok else "FAIL"
    print(f"{status}: {name}: relative error {error:.2e} (tolerance {TOLERANCE[element]:.0e})")
    if not ok:
        failures.append(name)
