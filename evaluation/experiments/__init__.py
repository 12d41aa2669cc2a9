"""Published experiments run on the bank's agents: their runs, summaries and reports."""
