"""The policy catalogue: every registered policy has its docs page with the shared
headings, and the docs' tables are what the registry generates."""

import os

import coflowkit as ck
import pytest
from coflowkit import catalogue
from conftest import ROOT

HEADINGS = ["## Source", "## Information model", "## Rule", "## Parameters",
            "## Tie-breaking", "## Worked example"]  # fmt: skip


@pytest.mark.parametrize("policy", [p["name"] for p in ck.policies()])
def test_every_policy_has_its_page_with_the_shared_headings(policy):
    path = ROOT / "docs" / "policies" / f"{policy}.md"
    assert path.exists(), f"{policy} is registered but {path} is missing"
    text = path.read_text()
    at = [text.find(h) for h in HEADINGS]
    assert all(i >= 0 for i in at), (
        f"{path}: missing {[h for h, i in zip(HEADINGS, at, strict=True) if i < 0]}"
    )
    assert at == sorted(at), f"{path}: headings out of order"


def test_the_docs_tables_are_generated_from_the_registry():
    for path, table, markers in catalogue.targets(str(ROOT)):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        assert catalogue.splice(text, table, path, markers) == text, (
            f"{os.path.relpath(path, ROOT)} is stale: run `coflowkit policies --write-docs .`"
        )


def test_every_spec_is_complete():
    names = [p["name"] for p in ck.policies()]
    assert len(names) == len(set(names))
    for p in ck.policies():
        assert p["summary"] and p["rule"] and p["paper"], p["name"]
        assert len(p["example_ccts"]) == 3 and all(x > 0 for x in p["example_ccts"]), p["name"]
        for q in p["params"]:
            assert q["help"], (p["name"], q["name"])
