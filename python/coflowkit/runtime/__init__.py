"""The real runtime: master, agents, testbed."""
