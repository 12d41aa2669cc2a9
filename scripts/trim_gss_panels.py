"""Rebuild the GSS panel files the evaluation ships, from NORC's public-use panel files.

    python scripts/trim_gss_panels.py ORIGINAL_FOLDER [--check]

ORIGINAL_FOLDER holds ``gss_panel06_long.parquet`` and ``gss_panel08_long.parquet``: the GSS three-wave
panels (2006-2008-2010 and 2008-2010-2012) in long form, one row per respondent and wave, as the R package
gssr 0.8 distributes them (github.com/kjhealy/gssr @ 827d7f0). Each keeps its rows and, of its 1,200 to
1,600 columns, those the evaluation reads: the respondent's id and wave, the panel weights and sampling
columns, every item of the GSS Core codebook the bank ships, and the demographics the evaluation codes
(age, years of school, Hispanic origin). Values stay as the original spells them (title-cased labels).

The files are written to ``evaluation/data/gss_panels/`` with ``MANIFEST.json`` (source, licence, how they
were made, and each file's sha256, which the evaluation checks before reading one). With ``--check`` nothing
is written: it says whether the shipped files hold the same table as a rebuild would (another version of
pyarrow may write other bytes for the same table, so the table is compared, not the bytes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from agentbank.consultation.answering.conditions import DEMOGRAPHIC_ATTITUDES, DEMOGRAPHIC_KEYS
from agentbank.instruments.gss import load_gss
from evaluation.people.coding import BOOKKEEPING
from evaluation.people.panel_files import FOLDER, MANIFEST, PANEL_FILES

ORIGINALS = {"gss-panel06": "gss_panel06_long.parquet", "gss-panel08": "gss_panel08_long.parquet"}
WEIGHTS = frozenset({"wtpan12", "wtpan123", "wtpannr12", "wtpannr123"})
EXTRA_DEMOGRAPHICS = frozenset({"age", "educ", "hispanic"})  # read by the evaluation, not Core items
ABOUT = {
    "about": "The GSS three-wave panels the evaluation scores agents on (agentbank evaluate --dataset "
    "gss-panel06 | gss-panel08), trimmed to the columns it reads.",
    "source": "NORC at the University of Chicago, General Social Survey (gss.norc.org): the public-use panel "
    "files 2006-2008-2010 and 2008-2010-2012, as distributed in the R package gssr 0.8 "
    "(github.com/kjhealy/gssr @ 827d7f0, in long form: one row per respondent and wave).",
    "licence": "GSS public-use data: free to use and share, citing NORC's General Social Survey as the source; "
    "never attempt to identify a respondent. The gssr package that distributes them is MIT-licensed.",
    "derived_by": "python scripts/trim_gss_panels.py ORIGINAL_FOLDER",
    "kept": "every row; of the columns: the id (firstid) and wave, the panel weights and sampling columns, "
    "every item of the GSS Core codebook the bank ships (agentbank/instruments/data/gss_core.json) and the "
    "demographics the evaluation codes (age, educ, hispanic); values as the original spells them. Columns "
    "left out hold no item the evaluation can score.",
}


def kept_columns(names: list[str]) -> list[str]:
    """The columns of an original file that the evaluation reads, in the file's order."""
    wanted = ({item.key for item in load_gss().items} | set(DEMOGRAPHIC_KEYS) | set(DEMOGRAPHIC_ATTITUDES)
              | EXTRA_DEMOGRAPHICS | BOOKKEEPING | WEIGHTS)  # fmt: skip
    return [name for name in names if name.lower() in wanted]


def trimmed(original: Path) -> pa.Table:
    """The original's rows with only the kept columns, without the writer's pandas metadata."""
    table = pq.read_table(original)
    return table.select(kept_columns(table.column_names)).replace_schema_metadata(None)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("originals", type=Path, help="the folder holding the original panel files")
    parser.add_argument("--check", action="store_true", help="compare with the shipped files; write nothing")
    args = parser.parse_args()
    manifest: dict[str, object] = dict(ABOUT)
    files: dict[str, dict[str, object]] = {}
    differ = []
    for dataset, original_name in ORIGINALS.items():
        original = args.originals / original_name
        if not original.is_file():
            print(f"no {original_name} in {args.originals}", file=sys.stderr)
            return 1
        table = trimmed(original)
        target = FOLDER / PANEL_FILES[dataset]
        if args.check:
            if not target.is_file() or not pq.read_table(target).equals(table):
                differ.append(target.name)
            continue
        pq.write_table(table, target, compression="zstd", compression_level=19)
        files[target.name] = {
            "dataset": dataset, "sha256": sha256(target), "bytes": target.stat().st_size, "rows": table.num_rows,
            "columns": table.num_columns, "original": original_name, "original_sha256": sha256(original),
        }  # fmt: skip
        print(f"{target.name}: {table.num_rows} rows, {table.num_columns} columns, {target.stat().st_size} bytes")
    if args.check:
        print("the shipped files differ from a rebuild: " + ", ".join(differ) if differ else "the same tables")
        return 1 if differ else 0
    manifest["files"] = files
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
