"""Field types shared by request bodies (defined with the domain, which validates the same text), and the
one number type a body may hold that is not an integer: finite, never NaN or an infinity (JSON has
neither, but Python's parser reads ``NaN`` and ``Infinity``, and pydantic reads "NaN" as a float)."""

from pydantic import FiniteFloat

from agentbank.text import Text, storable

__all__ = ["FiniteFloat", "Text", "storable"]
