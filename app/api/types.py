"""Field types shared by request bodies (defined with the domain, which validates the same text)."""

from agentbank.text import Text, storable

__all__ = ["Text", "storable"]
