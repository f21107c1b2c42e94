import sys

from coflowkit.cli import main

sys.exit(main())
