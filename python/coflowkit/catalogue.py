"""The policy tables of the docs, generated from the registry.

`docs/policies/README.md` and the README each hold a table between
``<!-- policies:begin -->`` and ``<!-- policies:end -->``; `coflowkit policies
--write-docs` rewrites both from the registry (`crates/coflowkit-policy/src/
policies/`), and a test checks the committed files are what it would write.
"""

from __future__ import annotations

import os
import re

from coflowkit import api

BEGIN, END = "<!-- policies:begin -->", "<!-- policies:end -->"
EXAMPLES = ("<!-- examples:begin -->", "<!-- examples:end -->")


def _model(p: dict) -> str:
    return p["info"] + (f" ({p['knows']})" if p["knows"] else "")


def docs_table(policies: list[dict] | None = None) -> str:
    """The table of docs/policies/README.md, and which policies take parameters."""
    policies = policies or api.policies()
    rows = [
        "| policy | information model | rule in one line | paper |",
        "| --- | --- | --- | --- |",
    ]
    rows += [
        f"| [{p['name']}]({p['name']}.md) | {_model(p)} | {p['rule']} | {p['paper']} |"
        for p in policies
    ]
    with_params = [f"`{p['name']}`" for p in policies if p["params"]]
    rows += [
        "",
        "Parameters are passed to a policy as `KEY=VALUE` strings (for example "
        "`ordering=static` for varys); an unknown key or a bad value is rejected with a "
        "message listing what is valid. The policies with parameters: "
        + ", ".join(with_params)
        + ".",
    ]
    return "\n".join(rows)


def readme_table(policies: list[dict] | None = None) -> str:
    """The table of the README."""
    policies = policies or api.policies()
    rows = ["| policy | needs sizes | rule | page |", "|---|---|---|---|"]
    for p in policies:
        sizes = (
            "yes"
            if p["info"] == "clairvoyant"
            else "no" + (f" ({p['knows']})" if p["knows"] else "")
        )
        page = f"[{p['name']}](docs/policies/{p['name']}.md)"
        rows.append(f"| `{p['name']}` | {sizes} | {p['summary']} | {page} |")
    return "\n".join(rows)


def examples_table(policies: list[dict] | None = None) -> str:
    """The worked example's CCTs, policies with the same CCTs on one row."""
    policies = policies or api.policies()
    rows: dict[tuple, list[str]] = {}
    for p in policies:
        rows.setdefault(tuple(p["example_ccts"]), []).append(p["name"])
    out = [
        "| policies | CCT 1 (s) | CCT 2 (s) | CCT 3 (s) | mean (s) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for ccts, names in rows.items():
        cells = " | ".join(f"{x:.6g}" for x in ccts)
        out.append(f"| {', '.join(names)} | {cells} | {sum(ccts) / 3:.6f} |")
    return "\n".join(out)


def splice(text: str, table: str, where: str, markers: tuple[str, str] = (BEGIN, END)) -> str:
    """``text`` with the block between the markers replaced by ``table``."""
    begin, end = markers
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"{where}: no {begin} ... {end} block")
    return pattern.sub(lambda _: f"{begin}\n{table}\n{end}", text, count=1)


def targets(root: str) -> list[tuple[str, str, tuple[str, str]]]:
    """(path, generated table, markers) of each generated block."""
    docs = os.path.join(root, "docs", "policies", "README.md")
    return [
        (docs, docs_table(), (BEGIN, END)),
        (docs, examples_table(), EXAMPLES),
        (os.path.join(root, "README.md"), readme_table(), (BEGIN, END)),
    ]


def write_docs(root: str) -> list[str]:
    """Rewrites the generated blocks under ``root``; returns the files changed."""
    changed = []
    for path, table, markers in targets(root):
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
        new = splice(old, table, path, markers)
        if new != old:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(new)
            if path not in changed:
                changed.append(path)
    return changed
