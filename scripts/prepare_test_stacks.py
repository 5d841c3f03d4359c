"""Build the scenario environments of tests/scenarios once, up front (CI runs this first).

    python scripts/prepare_test_stacks.py            # every stack, reusing current ones
    python scripts/prepare_test_stacks.py --list     # names, keys and whether each is current
    python scripts/prepare_test_stacks.py --force gpu13-bare

The wheels are unpacked once into ~/.cache/gpu-fallback-doctor/uv and the environments under
~/.cache/gpu-fallback-doctor/stacks/ hard-link their files from there (see
tests/scenarios/scenario_stacks.py). Prints the seconds each build took.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "scenarios"))

import scenario_stacks as stacks


def main(argv: list[str] | None = None) -> int:
    """Build (or list) the scenario stacks; exit 1 when a build fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="stacks to build (default: all)")
    parser.add_argument("--force", action="store_true", help="rebuild even when current")
    parser.add_argument("--list", action="store_true", help="list the stacks and exit")
    args = parser.parse_args(argv)

    names = args.names or list(stacks.STACKS)
    unknown = [n for n in names if n not in stacks.STACKS]
    if unknown:
        parser.error(f"unknown stack(s): {', '.join(unknown)}; known: {', '.join(stacks.STACKS)}")
    if args.list:
        for name in names:
            stack = stacks.STACKS[name]
            state = "current" if stacks.is_current(stack) else "missing"
            print(f"{name:22} {stack.key()}  {state:8} {stack.description}")
        return 0

    started = time.monotonic()
    failed = 0
    for name in names:
        try:
            _, seconds = stacks.build(stacks.STACKS[name], force=args.force)
        except stacks.StackBuildError as exc:
            failed += 1
            print(f"{name}: FAILED\n{exc}", file=sys.stderr)
            continue
        print(f"{name:22} {'reused' if seconds == 0 else f'built in {seconds:6.1f} s'}")
    print(f"total {time.monotonic() - started:.1f} s; stacks in {stacks.STACKS_DIR}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
