"""Two `coflowkit reproduce` output folders, table by table: the check that moving
an experiment to a spec (docs/architecture.md, "Experiments as specs") leaves its
numbers as they were.

Every CSV of the old folder must be in the new one with the same rows and equal
values in every column the two share (exactly; NaN equals NaN). Columns and files
only the new folder has are listed (the writer adds `where`, ratio and flag
columns, and new claims tables), and so is a column the new one lost (an error).

    python3 benches/reproduce_csvs.py OLD_FOLDER NEW_FOLDER

Exit status 0 when nothing differs, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd


def compare(old: Path, new: Path) -> tuple[list[str], list[str]]:
    """(differences, notes): what breaks the check, and what only the new has."""
    bad, notes = [], []
    a = {p.name for p in old.glob("*.csv")}
    b = {p.name for p in new.glob("*.csv")}
    bad += [f"{n}: missing from {new}" for n in sorted(a - b)]
    notes += [f"{n}: new file" for n in sorted(b - a)]
    for name in sorted(a & b):
        x, y = pd.read_csv(old / name), pd.read_csv(new / name)
        lost = [c for c in x.columns if c not in y.columns]
        added = [c for c in y.columns if c not in x.columns]
        if lost:
            bad.append(f"{name}: columns lost {lost}")
            continue
        if len(x) != len(y):
            bad.append(f"{name}: {len(x)} rows, now {len(y)}")
            continue
        both = list(x.columns)
        same = (x[both] == y[both]) | (x[both].isna() & y[both].isna())
        if not same.all().all():
            where = same.all(axis=1).to_numpy().argmin()
            cols = [c for c in both if not same[c].all()]
            bad.append(f"{name}: differs in {cols}, first at row {where}")
        elif added:
            notes.append(f"{name}: identical; new columns {added}")
    return bad, notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    args = ap.parse_args(argv)
    for d in (args.old, args.new):
        if not d.is_dir():
            print(f"reproduce_csvs: {d}: not a folder", file=sys.stderr)
            return 2
    bad, notes = compare(args.old, args.new)
    for line in notes + bad:
        print(line)
    n = len(list(args.old.glob("*.csv")))
    print(f"{n} tables compared, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
