import sys

from coflowkit.cli import main

if __name__ == "__main__":  # not when a spawned child process imports it (runtime/shards.py)
    sys.exit(main())
