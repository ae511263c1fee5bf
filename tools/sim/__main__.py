"""python -m tools.sim"""

import sys

from tools.sim.front import main

sys.exit(main())
