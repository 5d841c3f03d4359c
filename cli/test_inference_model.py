"""``--model FILE`` and ``--dim NAME=VALUE``: the application's own model in the test inference.

Shared by ``diagnose`` and ``test-inference``. The model is read here, before any probe starts, so
a file that is not ONNX, is cut short, or would need inputs larger than the probe may allocate is a
usage error that names the file (exit 2), and a ``--dim`` the model does not have is named with the
dimensions it does have. Core modules are imported only when the options are used (start-up time).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fallback_doctor.cli.common import UsageError

MODEL_HELP = (
    "the application's own .onnx model for the test inference (default: the bundled test encoder); "
    "inputs are made from its signature"
)
DIM_HELP = (
    "value of a dynamic dimension of the model (repeatable), e.g. --dim batch=16 --dim seq=128; "
    "a dimension without a name is INPUT:AXIS (--dim images:2=224). Not given: the model's "
    "description, else by name (batch 1, sequence 128, image side 224, channels 3, else 1); "
    "the report says which value each got"
)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Register ``--model`` and ``--dim`` on a sub-parser."""
    parser.add_argument("--model", metavar="FILE", help=MODEL_HELP)
    parser.add_argument("--dim", metavar="NAME=VALUE", action="append", default=[], help=DIM_HELP)


def parse_dims(items: list[str]) -> dict[str, int]:
    """``["batch=4", "seq=64"]`` -> ``{"batch": 4, "seq": 64}``; a usage error otherwise."""
    dims: dict[str, int] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise UsageError(f"--dim {item}: expected NAME=VALUE with a positive integer, e.g. --dim batch=4")
        dims[name.strip()] = int(value)
    return dims


def checked_model(args: argparse.Namespace) -> tuple[str | None, dict[str, int]]:
    """(the model's path or None for the bundled one, the dims) once the model is known to be usable.

    Reads the model (never runs it): a usage error names the file when it is missing, not ONNX,
    truncated, has inputs the probe cannot make, or would need too much memory; or names a --dim
    the model does not have. With ``--pid`` and no ``--model`` the dims are meant for the model the
    process shows (core/readers/inference/model_seen.py), so their names are not checked here.
    """
    from fallback_doctor.core.door import InferenceSetupError, dim_names, plan_inference, unknown_dim_names

    dims = parse_dims(list(args.dim or []))
    model = args.model
    if model and not os.path.isfile(model):
        raise UsageError(f"--model {model}: no such file")
    try:
        plan = plan_inference(Path(model) if model else None, dims=dims)
    except InferenceSetupError as error:
        raise UsageError(f"--model {error}" if model else str(error)) from None
    unknown = unknown_dim_names(plan.info, dims)
    if unknown and (model or not getattr(args, "pid", None)):
        names = ", ".join(dim_names(plan.info)) or "none: every dimension is fixed"
        raise UsageError(
            f"--dim {unknown[0]}: {plan.model.name} has no dynamic dimension of that name "
            f"(its dynamic dimensions: {names})"
        )
    return (str(plan.model) if model else None), dims
