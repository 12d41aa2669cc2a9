"""Rebuild the GSS reference counts the open tier ships, from the GSS codebook extract in the shared data.

    python scripts/extract_gss_reference.py [SOURCE] [--check]

SOURCE is the codebook extract ``gss_core_items.json`` (default: ``gss/gss_core_items.json`` under the default
reference data folder, ``../shared/data`` beside the checkout; its README.txt gives source and licence). For
each item of the bank's GSS instrument (``agentbank/instruments/data/gss_core.json``) the file keeps the item's
2022 response counts by answer label as the extract spells them (missing-data labels included, so the file is
the extract's own figures; the fidelity code keeps an item's options only), or, where none of the item's
options was counted in 2022, the reason why. Its header gives source, licence and the sha256 of the counts'
canonical JSON, which ``agentbank.publication.fidelity`` checks before using them.

It writes ``agentbank/publication/data/gss_reference_2022.json`` and prints the checksum. With ``--check``
nothing is written: it says whether the shipped file is the one a rebuild would write.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from agentbank.core.settings import default_reference_data_dir
from agentbank.instruments.gss import load_gss
from agentbank.publication.fidelity import (
    REFERENCE_FILE,
    REFERENCE_YEAR,
    SHIPPED_FILE,
    canonical_sha256,
    counts_by_code,
)

TARGET = Path(__file__).resolve().parents[1] / "agentbank" / "publication" / SHIPPED_FILE
NOT_ASKED = "not available in this year"  # the codebook's label for a year that did not ask the item
# As the shared data's gss/README.txt states them: its source (the extract came from gssrdoc) and licence.
HEADER: dict[str, Any] = {
    "about": f"The GSS's {REFERENCE_YEAR} response counts of each item of the bank's GSS instrument "
    "(agentbank/instruments/data/gss_core.json): the population the open tier's fidelity figures compare a "
    "release with (agentbank.publication.fidelity).",
    "source": "General Social Survey, NORC at the University of Chicago: the GSS Data Explorer / codebook "
    "(https://gssdataexplorer.norc.org), 1972-2024 cumulative file Release 3 metadata, as read by the R package "
    "gssrdoc (github.com/kjhealy/gssrdoc @ af3ff1904af157d7c4833a77497e1dba07db0e34, data/gss_doc.rda), then "
    "the shared data's GSS Core items extract (gss/gss_core_items.json).",
    "licence": "The question wording, codes and marginals are NORC's GSS documentation (NSF-funded, public, "
    'free to use); NORC asks that the GSS be cited: "GSS is a project of NORC at the University of Chicago" '
    "(Davern et al., General Social Surveys 1972-2024). The gssrdoc package is MIT (c) 2024 gssrdoc authors.",
    "year": REFERENCE_YEAR,
    "counts": f"unweighted response counts by answer label (the extract's counts_{REFERENCE_YEAR}, labels as it "
    "spells them, missing-data labels included); without_counts names each instrument item none of whose "
    f"options was counted in {REFERENCE_YEAR}, with the reason.",
    "extracted_by": "python scripts/extract_gss_reference.py [SOURCE] (SOURCE: gss/gss_core_items.json of the "
    "shared reference data, by default ../shared/data beside the checkout)",
    "sha256_of": "the counts object's canonical JSON: json.dumps(counts, sort_keys=True, separators=(',', ':')) "
    "in UTF-8 (agentbank.publication.fidelity.canonical_sha256), checked when the file is read",
}


def reason(found: dict[str, int] | None) -> str:
    """Why an item has no counts of its options in the reference year, in the codebook's terms."""
    if found is None:
        return "not in the codebook extract"
    labels = [label.lower() for label in found]
    if not labels:
        return f"the codebook gives no {REFERENCE_YEAR} counts"
    if set(labels) == {NOT_ASKED}:
        return f"not asked in {REFERENCE_YEAR} (the codebook: {NOT_ASKED})"
    return f"none of its options was counted in {REFERENCE_YEAR} (the codebook's labels: {', '.join(labels)})"


def extract(source: Path) -> dict[str, Any]:
    """The shipped file's content, from the codebook extract at ``source``."""
    raw = source.read_bytes()
    entries = {e["variable"]: e.get(f"counts_{REFERENCE_YEAR}") for e in json.loads(raw)}
    counts: dict[str, dict[str, int]] = {}
    without: dict[str, str] = {}
    for item in load_gss().items:  # the instrument's order: the file reads like the instrument
        found = entries.get(item.key)
        if found is not None and counts_by_code(found, item):
            counts[item.key] = {label: int(n) for label, n in found.items()}
        else:
            without[item.key] = reason(None if item.key not in entries else found or {})
    header = {
        **HEADER,
        "source_sha256": hashlib.sha256(raw).hexdigest(),  # of the extract it was made from
        "items": len(counts) + len(without),
        "items_with_counts": len(counts),
        "sha256": canonical_sha256(counts),
    }
    return {"header": header, "counts": counts, "without_counts": without}


def rendered(content: dict[str, Any]) -> str:
    return json.dumps(content, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, nargs="?", default=default_reference_data_dir() / REFERENCE_FILE,
                        help="the codebook extract gss_core_items.json")  # fmt: skip
    parser.add_argument("--check", action="store_true", help="compare with the shipped file; write nothing")
    args = parser.parse_args()
    if not args.source.is_file():
        print(f"no codebook extract at {args.source}", file=sys.stderr)
        return 1
    content = extract(args.source)
    text = rendered(content)
    checksum = content["header"]["sha256"]
    if args.check:
        same = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
        print(f"the shipped file is a rebuild's: sha256 {checksum}" if same else "the shipped file differs")
        return 0 if same else 1
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    header = content["header"]
    print(f"wrote {TARGET.name}: {header['items_with_counts']} of {header['items']} items with counts, "
          f"{TARGET.stat().st_size} bytes")  # fmt: skip
    print(f"sha256 {checksum}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
