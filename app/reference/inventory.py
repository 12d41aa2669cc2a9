"""What every column of every table may hold, from the bank's own data inventory."""

from __future__ import annotations

from agentbank.db.inventory import INVENTORY, Kind


def markdown() -> str:
    lines = ["| kind | what a column of this kind may hold |", "|---|---|"]
    lines += [f"| `{kind.name.lower()}` | {kind.value} |" for kind in Kind]
    lines.append("")
    for table, columns in sorted(INVENTORY.items()):
        lines += [f"### `{table}`", "", "| column | kind |", "|---|---|"]
        lines += [f"| `{column}` | `{kind.name.lower()}` |" for column, kind in columns.items()]
        lines.append("")
    return "\n".join(lines)
