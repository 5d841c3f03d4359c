"""The frozen build's entry script: the `fallback-doctor` command's own main.

``multiprocessing.freeze_support()`` comes first (a frozen child started by multiprocessing
must not run the tool), then the tool's own probes (``--run-probe``, ``--run-module``: the
frozen executable re-invokes itself for them), before the rest of the tool is imported.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from fallback_doctor.core.frozen import run_probe_if_asked

    status = run_probe_if_asked(sys.argv[1:])
    if status is not None:
        sys.exit(status)
    from fallback_doctor.launcher import main

    sys.exit(main())
