"""python -m tools.bench"""

import sys

from tools.bench.front import main

sys.exit(main())
