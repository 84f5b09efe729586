"""``python -m benchmarks.gpu``: the GPU check (:mod:`benchmarks.gpu.check`)."""

import sys

from benchmarks.gpu.check import main

sys.exit(main())
