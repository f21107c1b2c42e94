"""Parquet flow tables, read and written with pyarrow.

Columns as in the CSV flow table (see coflowkit-trace/src/flowtable.rs); errors name
the file, the row (1-based) and the column.
"""

from __future__ import annotations

import math

from coflowkit import _core
from coflowkit._core import CoflowkitError, Workload

REQUIRED = ["coflow_id", "flow_id", "src", "dst", "bytes", "start_s"]


def _col(table, name, path, kind, optional=False):
    import pyarrow as pa

    if name not in table.column_names:
        if optional:
            return None
        raise CoflowkitError(
            f"{path}: {name}: missing required column (required: {', '.join(REQUIRED)})"
        )
    values = table.column(name).to_pylist()
    out = []
    for i, v in enumerate(values, start=1):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            if optional:
                out.append(None)
                continue
            raise CoflowkitError(f"{path}: row {i}: {name}: missing value")
        try:
            if kind == "uint":
                if isinstance(v, float) and not v.is_integer():
                    raise ValueError
                x = int(v)
                if x < 0:
                    raise ValueError
            elif kind == "int":
                if isinstance(v, float) and not v.is_integer():
                    raise ValueError
                x = int(v)
            elif kind == "float":
                x = float(v)
                if not math.isfinite(x):
                    raise ValueError
            else:
                x = str(v)
        except (TypeError, ValueError):
            what = {"uint": "a whole number >= 0", "int": "a whole number", "float": "a number"}
            raise CoflowkitError(
                f"{path}: row {i}: {name}: expected {what.get(kind, 'text')}, got {v!r}"
            ) from None
        out.append(x)
    del pa
    return out


def read_parquet_flows(path: str) -> Workload:
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise CoflowkitError(f"{path}: cannot read the Parquet file: {e}") from None
    if table.num_rows == 0:
        raise CoflowkitError(f"{path}: the flow table has no rows")
    cols = {
        "coflow_id": _col(table, "coflow_id", path, "uint"),
        "flow_id": _col(table, "flow_id", path, "uint"),
        "src": _col(table, "src", path, "int"),
        "dst": _col(table, "dst", path, "int"),
        "bytes": _col(table, "bytes", path, "float"),
        "start_s": _col(table, "start_s", path, "float"),
    }
    opt = {
        "arrival_s": _col(table, "arrival_s", path, "float", optional=True),
        "weight": _col(table, "weight", path, "float", optional=True),
        "src_port": _col(table, "src_port", path, "uint", optional=True),
        "dst_port": _col(table, "dst_port", path, "uint", optional=True),
        "tenant": _col(table, "tenant", path, "str", optional=True),
        "stage": _col(table, "stage", path, "uint", optional=True),
        "priority": _col(table, "priority", path, "uint", optional=True),
    }
    deps = None
    if "depends_on" in table.column_names:
        deps = []
        for i, v in enumerate(table.column("depends_on").to_pylist(), start=1):
            if v is None or v == "":
                deps.append([])
                continue
            try:
                deps.append([int(t) for t in str(v).split(";") if t.strip()])
            except ValueError:
                raise CoflowkitError(
                    f"{path}: row {i}: depends_on: expected flow ids separated by ';', got {v!r}"
                ) from None
    return _core.workload_from_columns(path, **cols, **opt, depends_on=deps)


#: Optional whole-number columns written as nullable ``uint32`` (pandas reads a CSV
#: column with empty cells as floats).
STAGE_COLUMNS = ["stage", "priority"]


def write_parquet_flows(workload: Workload, path: str) -> None:
    """The CSV flow table's columns (``Workload.to_text("flows")``), with ``stage``
    and ``priority`` (present when a flow has one) as nullable ``uint32`` columns
    (empty: null)."""
    import io

    import pandas as pd

    df = pd.read_csv(io.StringIO(workload.to_text("flows")))
    for name in STAGE_COLUMNS:
        if name in df.columns:
            df[name] = df[name].astype("UInt32")
    df.to_parquet(path, index=False)
