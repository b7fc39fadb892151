"""``python -m netstep_analysis report RUN_OR_SWEEP [--out DIR]``."""

import sys

from netstep_analysis.report import main

sys.exit(main())
