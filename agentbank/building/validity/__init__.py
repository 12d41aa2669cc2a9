"""Validity that travels with every answer: report cards per agent, figures per item."""
