"""Count the inputs that make each reader raise (not its documented refusal): the before/after figures.

Not a test: ``python tests/hostile/count_failures.py [N]`` runs every reader of strategies.py on
N Hypothesis inputs (fewer for the costly readers) and prints one JSON line per reader:
tried, failed, the first failure's exception. Run it with another checkout's interpreter (its
editable install) to count the failures of that code on the same inputs (derandomized).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hypothesis import HealthCheck, given, settings
from strategies import readers

COSTLY = {"report document through export": 5, "bundle zip: open and show": 3, "redactor on log text": 2}


def count(reader: object, examples: int) -> dict[str, object]:
    tried = 0
    failed = 0
    kinds: Counter[str] = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    @given(reader.strategy)  # type: ignore[attr-defined]
    def run(value: object) -> None:
        nonlocal tried, failed
        tried += 1
        try:
            reader.call(value)  # type: ignore[attr-defined]
        except reader.refusals:  # type: ignore[attr-defined]
            pass
        except Exception as error:  # noqa: BLE001 - counted, that is the point
            failed += 1
            kinds[f"{type(error).__name__}: {str(error)[:80]}"] += 1

    started = time.monotonic()
    run()
    return {
        "reader": reader.name,  # type: ignore[attr-defined]
        "tried": tried,
        "failed": failed,
        "seconds": round(time.monotonic() - started, 1),
        "first": kinds.most_common(1)[0][0] if kinds else None,
    }


def main() -> int:
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    for reader in readers():
        try:
            row = count(reader, max(50, examples // COSTLY.get(reader.name, 1)))
        except Exception as error:  # noqa: BLE001 - a reader this checkout does not have
            row = {"reader": reader.name, "error": f"{type(error).__name__}: {error}"[:200]}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
