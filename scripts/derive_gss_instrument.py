"""Derive the packaged GSS instrument from the GSS codebook extract in the shared data folder.

Keeps what an instrument needs (mnemonic, kind, wording, codes, and the first GSS subject as the
item's topic) and drops the counts and links.
Run: python scripts/derive_gss_instrument.py ../shared/data/gss/gss_core_items.json
"""

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "agentbank" / "instruments" / "data" / "gss_core.json"


def _topic(item: dict) -> str:
    """The item's first GSS subject ("Civil Liberties", "Confidence"), or its own key when it has none."""
    subjects = item.get("subjects") or ""
    if isinstance(subjects, list):
        subjects = "; ".join(subjects)
    first = subjects.split(";")[0].strip()
    return first or item["variable"]


def main(source: str) -> None:
    items = json.loads(Path(source).read_text())
    kept = [
        {
            "variable": item["variable"],
            "kind": item["kind"],
            "description": item["description"],
            "question": " ".join(item["question"].split()),
            "options": [{"code": o["code"], "label": o["label"]} for o in item["options"]],
            "topic": _topic(item),
        }
        for item in items
    ]
    payload = {
        "source": "GSS Core items 2016-2022 (NORC at the University of Chicago; codebook via gssrdoc, MIT)",
        "items": kept,
    }
    OUT.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(kept)} items to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
