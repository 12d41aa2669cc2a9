"""A run's HTML report, its tables and its sections on what the run found."""
