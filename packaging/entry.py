"""The frozen build's entry script: the `fallback-doctor` command's own main.

``multiprocessing.freeze_support()`` comes first for a process that multiprocessing itself
started (its arguments say so); the tool starts its own children with ``subprocess``, and
importing multiprocessing in every start (the probe children's too) costs about 50 ms here.
``main`` then runs the tool's own probes (``--run-probe``, ``--run-module``: the frozen
executable re-invokes itself for them) before importing the rest.
"""

import sys

if __name__ == "__main__":
    if any(arg.startswith("--multiprocessing") for arg in sys.argv[1:]) or sys.argv[1:2] == ["-c"]:
        import multiprocessing

        multiprocessing.freeze_support()
    from fallback_doctor.launcher import main

    sys.exit(main())
