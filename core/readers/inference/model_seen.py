"""The application's own model, where the running process shows it: its command line, its open files.

``diagnose --pid PID`` without ``--model`` runs the test inference on the model the process was
started with (``python app.py --model /srv/app/model.onnx``, ``serve /srv/app/model.onnx``) or
holds open, so the CPU baseline and the GPU retry answer the technician's question about *their*
model. A relative path is read from the process's working directory. Only files that exist and
end in ``.onnx`` count; nothing is opened but ``/proc`` entries. By hand:
``tr '\\0' ' ' < /proc/PID/cmdline; ls -l /proc/PID/fd | grep .onnx``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

MAX_FDS = 4096
"""Open files looked at, at most (a busy server may hold many sockets)."""


@dataclass(frozen=True)
class SeenModel:
    """A model file the process names or holds, and where that was seen."""

    path: str
    where: str
    """"cmdline" (its command line) or "open_file" (/proc/PID/fd)."""


def models_seen(pid: int, cmdline: Sequence[str], proc: str = "/proc") -> list[SeenModel]:
    """The .onnx files process ``pid`` names on its command line, then those it holds open (each once)."""
    base = os.path.join(proc, str(pid))
    try:
        cwd = os.readlink(os.path.join(base, "cwd"))
    except OSError:
        cwd = None
    seen: list[SeenModel] = []
    for argument in cmdline[1:]:
        for part in _candidates(argument):
            path = part if os.path.isabs(part) or cwd is None else os.path.join(cwd, part)
            _add(seen, path, "cmdline")
    try:
        fds = sorted(os.listdir(os.path.join(base, "fd")), key=lambda name: (len(name), name))[:MAX_FDS]
    except OSError:
        fds = []
    for fd in fds:
        try:
            target = os.readlink(os.path.join(base, "fd", fd))
        except OSError:
            continue
        _add(seen, target, "open_file")
    return seen


def _candidates(argument: str) -> list[str]:
    """``--model=/a/b.onnx`` and ``/a/b.onnx`` alike (the value after the first "=" of an option)."""
    if argument.startswith("-") and "=" in argument:
        argument = argument.split("=", 1)[1]
    return [argument] if argument.lower().endswith(".onnx") else []


def _add(seen: list[SeenModel], path: str, where: str) -> None:
    if not path.lower().endswith(".onnx"):
        return
    real = os.path.realpath(path)
    if os.path.isfile(real) and all(item.path != real for item in seen):
        seen.append(SeenModel(real, where))
