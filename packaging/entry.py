"""The frozen build's entry script: the `fallback-doctor` command's own main.

``multiprocessing.freeze_support()`` comes first (a frozen child started by multiprocessing
must not run the tool); ``main`` then runs the tool's own probes (``--run-probe``,
``--run-module``: the frozen executable re-invokes itself for them) before importing the rest.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from fallback_doctor.launcher import main

    sys.exit(main())
