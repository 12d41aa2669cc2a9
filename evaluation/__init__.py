"""Evaluation of agents against the people they simulate."""
