"""`python -m ferrotool`: the command line."""

import sys

from ferrotool.cli import main

sys.exit(main())
