"""The people agents are scored against: the GSS panels, a researcher's own file, the bank's own participants."""
