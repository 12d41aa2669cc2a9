"""An evaluation run: what it asks, the conditions it compares (solvers and baselines), and its answers as they come."""
