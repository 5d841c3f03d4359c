"""`python -m fallback_doctor`: the same as the `fallback-doctor` command."""

import sys

from fallback_doctor.launcher import main

sys.exit(main())
