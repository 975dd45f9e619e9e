"""`python -m ferrotool`: the command line."""

import sys

from ferrotool._cli import main

sys.exit(main())
