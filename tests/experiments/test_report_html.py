"""The HTML reports in a real browser (the distribution's headless Chromium): a
report written by the experiment writer, and every report committed under
docs/results. Each page must load with no console error, show its provenance
before anything else, and hold every figure (embedded and decoded) and every
table of its report.md."""

import re
from pathlib import Path

import pytest
from coflowkit import runner
from coflowkit.experiments import common, writer
from coflowkit.experiments.spec import Experiment, Figure, Model, Run, Table

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted(p.parent for p in (ROOT / "docs" / "results").glob("*/report.md"))


def figure(ctx):
    pl = common.plt()
    fig, ax = pl.subplots(figsize=(4, 3))
    ax.plot(ctx.runs["exact"]["F"].coflows["cct_s"].to_numpy(), marker="o")
    return fig


TEMPLATE = '{{ show("ccts") }}\n\n{{ show("ccts_fig.png") }}\n'


def toy(template: Path) -> Experiment:
    return Experiment(
        name="toy",
        title="Toy",
        paper="nowhere.txt",
        models=(Model("exact", "exact"),),
        runs=(Run("F", "fair"), Run("S", "fifo")),
        workload=lambda o: runner.WorkloadSpec(trace=o.trace),
        parts=(
            Table(
                "ccts",
                "CCTs",
                lambda ctx: ctx.runs["exact"]["F"].coflows[["coflow_id", "cct_s"]],
            ),
            Figure("ccts_fig", figure),
        ),
        template=str(template),
    )


def markdown_counts(md: str) -> tuple[int, int]:
    """(figures, tables) a report.md holds: image links, and table header rules."""
    images = len(re.findall(r"!\[[^\]]*\]\([^)]+\.png\)", md))
    tables = len(re.findall(r"^\|(?:\s*:?-+:?\s*\|)+\s*$", md, flags=re.M))
    return images, tables


def check_page(browser, folder: Path) -> None:
    md = (folder / "report.md").read_text()
    images, tables = markdown_counts(md)
    page, errors = browser.open((folder / "report.html").as_uri())
    assert errors == [], folder
    assert page.title() == md.splitlines()[0][2:].strip()
    # Provenance comes first: the section right after the title.
    first = page.evaluate("document.querySelector('h1').nextElementSibling.className")
    assert first == "provenance", folder
    assert "Command:" in page.locator("section.provenance").inner_text()
    decoded = page.evaluate(
        "Array.from(document.images).map(i => i.complete && i.naturalWidth > 0"
        " && i.src.startsWith('data:image/png'))"
    )
    assert len(decoded) == images and all(decoded), folder
    assert page.locator("table").count() == tables, folder
    page.close()


def test_writer_html_report_in_a_browser(tmp_path, example_path, browser):
    t = tmp_path / "toy.md"
    t.write_text(TEMPLATE)
    out = tmp_path / "out"
    writer.run(toy(t), out=str(out), trace=str(example_path), cache_dir=None)
    assert markdown_counts((out / "report.md").read_text()) == (1, 1)
    check_page(browser, out)
    # Self-contained: the page names no file beside it.
    html = (out / "report.html").read_text()
    assert 'src="ccts_fig.png"' not in html and "data:image/png;base64," in html


@pytest.mark.parametrize("folder", REPORTS, ids=[p.name for p in REPORTS])
def test_committed_report_html_in_a_browser(folder, browser, tmp_path):
    assert (folder / "report.html").exists(), f"{folder}: no report.html"
    # The committed page is what the writer renders from the committed report.md.
    copy = tmp_path / folder.name
    copy.mkdir()
    for f in folder.iterdir():
        if f.suffix in (".md", ".png"):
            (copy / f.name).write_bytes(f.read_bytes())
    writer.render_html(str(copy))
    assert (copy / "report.html").read_text() == (folder / "report.html").read_text()
    check_page(browser, folder)


def test_reports_are_found():
    assert {p.name for p in REPORTS} >= {"ncdrf", "coflex", "mcs", "coda-scheduler", "stream"}
