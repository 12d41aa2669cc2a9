"""Field types shared by request bodies (text defined with the domain, which validates the same text), each
parsed at the edge so that domain code only ever sees values it can use and store:

- ``FiniteFloat``: never NaN or an infinity (JSON has neither, but Python's parser reads ``NaN``,
  ``Infinity`` and ``1e999``, and pydantic reads "NaN" as a float);
- ``AwareDatetime``: a time with its zone (a naive one cannot be compared with the bank's times);
- ``Serial`` and ``BigSerial``: an id within its column's type, PostgreSQL's ``integer`` or ``bigint``
  (a number beyond it is refused by the database, a 500 were it sent there).
"""

from typing import Annotated

from pydantic import AwareDatetime, Field, FiniteFloat

from agentbank.core.text import Text, storable

INTEGER_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1

Serial = Annotated[int, Field(ge=1, le=INTEGER_MAX)]
BigSerial = Annotated[int, Field(ge=1, le=BIGINT_MAX)]

__all__ = ["BIGINT_MAX", "INTEGER_MAX", "AwareDatetime", "BigSerial", "FiniteFloat", "Serial", "Text", "storable"]
