"""The experiment writer (coflowkit.experiments.writer) on a spec small enough to
compute by hand: the shared worked example under `fair` and `fifo`, whose CCTs each
policy's spec gives (EXAMPLE_CCTS). Also: the report templates hold no numbers of
their own."""

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from coflowkit import runner
from coflowkit._core import CoflowkitError
from coflowkit.experiments import common, writer
from coflowkit.experiments.common import Claim
from coflowkit.experiments.spec import Claims, Data, Experiment, Figure, Model, Run, Table
from conftest import EXAMPLE_CCTS

TEMPLATE = """Mean CCT under fair: {{ fair_mean | fmt }} s.

{{ show("claims") }}
{{ show("ccts") }}
{% if has("nothing") %}never{% endif %}
{% for m in labels %}{{ m }}: {{ reproduced[m][0] }} of {{ reproduced[m][1] }}
{% endfor %}
"""


def mean(xs):
    return sum(xs) / len(xs)


def claims(ctx):
    fair = ctx.each(lambda m: float(ctx.runs[m]["F"].coflows["cct_s"].mean()))
    return [
        # twice ours: ratio 0.5, flagged
        Claim("fair mean CCT", "x", "value", 2 * mean(EXAMPLE_CCTS["fair"]), fair, "Table 9"),
        # within 15%: not flagged
        Claim("fair mean CCT, close", "x", "value", 1.1 * mean(EXAMPLE_CCTS["fair"]), fair),
        Claim(
            "fifo's first coflow at most 1 s",
            "< 1",
            "below",
            1.0,
            ctx.each(lambda m: float(ctx.runs[m]["S"].coflows["cct_s"].iloc[0])),
        ),
        Claim(
            "fifo no faster than fair on coflow 1",
            "holds",
            "true",
            1,
            ctx.each(
                lambda m: bool(
                    ctx.runs[m]["S"].coflows["cct_s"].iloc[0]
                    >= ctx.runs[m]["F"].coflows["cct_s"].iloc[0]
                )
            ),
        ),
    ]


def experiment(template_path, parts=None, engine_models=None) -> Experiment:
    return Experiment(
        name="toy",
        title="Toy",
        paper="nowhere.txt",
        models=engine_models or (Model("exact", "exact"),),
        runs=(Run("F", "fair"), Run("S", "fifo")),
        workload=lambda o: runner.WorkloadSpec(trace=o.trace),
        parts=parts
        or (
            Claims("claims", "Stated", claims),
            Table(
                "ccts",
                "CCTs",
                lambda ctx: pd.DataFrame(
                    {n: ctx.runs["exact"][n].coflows["cct_s"] for n in ("F", "S")}
                ),
            ),
            Table("nothing", "never computed", lambda ctx: None),
        ),
        template=str(template_path),
        values=lambda ctx: {"fair_mean": float(ctx.runs["exact"]["F"].coflows["cct_s"].mean())},
    )


@pytest.fixture
def toy(tmp_path):
    t = tmp_path / "toy.md"
    t.write_text(TEMPLATE)
    return t


def test_writer_tables_claims_and_report(toy, example_path, tmp_path):
    out = tmp_path / "out"
    path = writer.run(experiment(toy), out=str(out), trace=str(example_path), cache_dir=None)
    fair, fifo = EXAMPLE_CCTS["fair"], EXAMPLE_CCTS["fifo"]
    t = pd.read_csv(out / "ccts.csv")
    assert t["F"].tolist() == pytest.approx(fair, abs=1e-9)
    assert t["S"].tolist() == pytest.approx(fifo, abs=1e-9)
    v = pd.read_csv(out / "claims_values.csv").set_index("claim")
    assert float(v.loc["fair mean CCT", "exact"]) == pytest.approx(mean(fair))
    assert v.loc["fair mean CCT", "exact: ratio"] == pytest.approx(0.5)
    assert v.loc["fair mean CCT", "exact: flag"]
    assert v.loc["fair mean CCT", "where"] == "Table 9"
    assert v.loc["fair mean CCT, close", "exact: ratio"] == pytest.approx(1 / 1.1)
    assert not v.loc["fair mean CCT, close", "exact: flag"]
    assert v.loc["fifo's first coflow at most 1 s", "exact: ratio"] == pytest.approx(fifo[0])
    assert not v.loc["fifo's first coflow at most 1 s", "exact: flag"]
    ordered = fifo[0] >= fair[0]
    assert v.loc["fifo no faster than fair on coflow 1", "exact: flag"] == (not ordered)
    shown = pd.read_csv(out / "claims.csv").set_index("claim")
    assert shown.loc["fair mean CCT", "exact"].endswith("(0.50): **off >15%**")
    report = Path(path).read_text()
    assert report.startswith("# Toy\n")
    assert f"Mean CCT under fair: {common.fmt(mean(fair))} s." in report
    assert "**CCTs** (`ccts.csv`)" in report and "never" not in report
    assert f"exact: {2 + ordered} of 4" in report  # the close, the bound, maybe the order
    assert "## Provenance" in report and "Wall time" in report
    html = (out / "report.html").read_text()
    assert "<table>" in html and "<h1>Toy</h1>" in html
    p = json.loads((out / "provenance.json").read_text())
    assert p["command"] == f"coflowkit reproduce toy --out {out}"
    assert p["simulated_jobs"] == 2 and p["cached_jobs"] == 0
    assert set(p) >= {"version", "commit", "date", "wall_s", "machine", "paper"}


def test_a_part_the_template_leaves_out_is_an_error(tmp_path, example_path):
    t = tmp_path / "t.md"
    t.write_text('{{ show("claims") }}\n')
    with pytest.raises(CoflowkitError, match="does not show ccts"):
        writer.run(experiment(t), out=str(tmp_path / "o"), trace=str(example_path))


def test_showing_a_part_not_computed_is_an_error(tmp_path, example_path):
    t = tmp_path / "t.md"
    t.write_text('{{ show("claims") }}{{ show("ccts") }}{{ show("nothing") }}\n')
    with pytest.raises(CoflowkitError, match="shows 'nothing', which was not computed"):
        writer.run(experiment(t), out=str(tmp_path / "o"), trace=str(example_path))


def test_an_undefined_name_in_the_template_is_an_error(tmp_path, example_path):
    t = tmp_path / "t.md"
    t.write_text('{{ show("claims") }}{{ show("ccts") }}{{ no_such_value }}\n')
    with pytest.raises(CoflowkitError, match="t.md: 'no_such_value' is undefined"):
        writer.run(experiment(t), out=str(tmp_path / "o"), trace=str(example_path))


def test_engine_selects_the_models_and_a_figure_is_written(tmp_path, example_path, toy):
    models = (Model("exact", "exact", record=0.01), Model("CoflowSim", "coflowsim"))
    exp = experiment(toy, engine_models=models)
    chosen = writer.select_models(exp, "coflowsim:epoch_s=1")
    assert [(m.label, m.engine, m.record) for m in chosen] == [
        ("CoflowSim", "coflowsim:epoch_s=1", None)
    ]
    opts = writer.Options(out="o", trace=str(example_path))
    keyed = writer.plan(exp, opts, writer.select_models(exp, None))
    assert [(k, j.policy, j.engine, j.record) for k, j in keyed] == [
        (("exact", "F"), "fair", "exact", 0.01),
        (("exact", "S"), "fifo", "exact", 0.01),
        (("CoflowSim", "F"), "fair", "coflowsim", None),
        (("CoflowSim", "S"), "fifo", "coflowsim", None),
    ]

    def fig(ctx):
        pl = common.plt()
        f, ax = pl.subplots()
        ax.plot([0, 1], [0, 1])
        return f

    t = tmp_path / "f.md"
    t.write_text('{{ show("line.png") }}{{ show("line") }}')
    # a figure and a table may share a name (line.png, line.csv): both are shown
    table = Table("line", "the line", lambda ctx: pd.DataFrame({"x": [0, 1], "y": [0, 1]}))
    exp = experiment(t, parts=(Figure("line", fig), table))
    writer.run(exp, out=str(tmp_path / "o"), trace=str(example_path))
    assert (tmp_path / "o" / "line.png").stat().st_size > 0
    report = (tmp_path / "o" / "report.md").read_text()
    assert "![line](line.png)" in report and "**the line** (`line.csv`)" in report


def test_run_params_follow_the_model():
    m = Model("rc", "exact", ("realloc=coflow",))
    assert (
        Run("n", "ncdrf", ("backfill_rounds=0",)).spec(m)
        == "ncdrf:backfill_rounds=0,realloc=coflow"
    )
    assert Run("t", "fair", model_params=False).spec(m) == "fair"


def test_ratio_and_flag_by_kind():
    c = Claim("c", "1", "value", 2.0, {})
    assert writer.ratio_and_flag(c, 2.2) == (pytest.approx(1.1), False)
    assert writer.ratio_and_flag(c, 2.4)[1] is True
    assert (
        math.isnan(writer.ratio_and_flag(c, None)[0]) and writer.ratio_and_flag(c, None)[1] is None
    )
    b = Claim("b", "< 5", "below", 5.0, {})
    assert writer.ratio_and_flag(b, 4.0) == (pytest.approx(0.8), False)
    assert writer.ratio_and_flag(b, 5.0)[1] is True
    a = Claim("a", "> 5", "above", 5.0, {})
    assert writer.ratio_and_flag(a, 4.0)[1] is True
    t = Claim("t", "holds", "true", 1, {})
    assert writer.ratio_and_flag(t, False)[1] is True and writer.ratio_and_flag(t, True)[1] is False


#: Outside its {{ }}, {% %} and {# #} tags, a template may hold no decimal number or
#: percentage: results and the paper's values come from the spec and the runs.
#: Section references (§6.3, §6.3-6.4) are not numbers of either kind.
NUMBER = re.compile(r"\d+\.\d+|\d+\s?%")
SECTION = re.compile(r"§[\d.]+(?:-[\d.]+)?")


def test_templates_hold_no_numbers_of_their_own():
    folder = Path(writer.HERE)
    templates = sorted(folder.glob("*.md"))
    assert templates, "no report template found"
    for t in templates:
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", "", t.read_text(), flags=re.S)
        text = SECTION.sub("", text)
        found = NUMBER.findall(text)
        assert not found, f"{t.name} writes numbers by hand: {found}"
    assert NUMBER.findall("paper 5.75, 68%") == ["5.75", "68%"]  # the check can fail
    assert NUMBER.findall(SECTION.sub("", "§6.3-6.4 and §4.1, 0.05")) == ["0.05"]


def test_every_experiment_is_a_spec():
    import importlib

    from coflowkit.experiments import EXPERIMENTS, MODULES

    assert set(MODULES) == set(EXPERIMENTS)
    for name, mod in MODULES.items():
        m = importlib.import_module(f"coflowkit.experiments.{mod}")
        # a spec names itself, its template exists, and it has no run of its own
        spec = m.EXPERIMENT
        assert spec.name == name and not hasattr(m, "run"), name
        assert (Path(writer.HERE) / spec.template).exists(), name


def test_an_experiment_computed_in_memory_runs_no_jobs(tmp_path, example_path):
    # no workload and no jobs of its own: local() computes everything; a Data part
    # is written as CSV only and need not be shown
    t = tmp_path / "mem.md"
    t.write_text('Total {{ total | num }}.\n\n{{ show("sums") }}')
    rows = pd.DataFrame({"x": [1.0, 2.0, 3.5]})
    exp = Experiment(
        name="mem",
        title="Memory",
        paper="nowhere.txt",
        models=(),
        runs=(),
        workload=None,
        parts=(
            Table("sums", "Sums", lambda ctx: pd.DataFrame({"sum": [ctx.local["x"].sum()]})),
            Data("raw", lambda ctx: ctx.local),
            Data("never", lambda ctx: None),
        ),
        template=str(t),
        local=lambda ctx: rows * ctx.opts.config,
        values=lambda ctx: {"total": float(ctx.local["x"].sum())},
    )
    out = tmp_path / "o"
    path = writer.run(exp, out=str(out), trace=str(example_path), config=2)
    assert pd.read_csv(out / "raw.csv")["x"].tolist() == [2.0, 4.0, 7.0]
    assert not (out / "raw.md").exists() and not (out / "never.csv").exists()
    assert pd.read_csv(out / "sums.csv")["sum"].tolist() == [13.0]
    report = Path(path).read_text()
    assert "Total 13." in report and "**Sums** (`sums.csv`)" in report
    p = json.loads((out / "provenance.json").read_text())
    assert p["simulated_jobs"] == 0 and p["cached_jobs"] == 0


def test_reproduce_csvs_compares_two_output_folders(tmp_path):
    # the tool that checks a move to a spec: same values in shared columns pass,
    # a new column is listed, a changed value or a lost column fails
    import subprocess
    import sys

    tool = Path(__file__).resolve().parents[2] / "benches" / "reproduce_csvs.py"
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    pd.DataFrame({"claim": ["a", "b"], "x": [1.5, float("nan")]}).to_csv(old / "t.csv", index=False)
    pd.DataFrame({"claim": ["a", "b"], "x": [1.5, float("nan")], "where": ["T1", "T2"]}).to_csv(
        new / "t.csv", index=False
    )

    def check():
        return subprocess.run(
            [sys.executable, str(tool), str(old), str(new)], capture_output=True, text=True
        )

    r = check()
    assert r.returncode == 0, r.stdout
    assert "t.csv: identical; new columns ['where']" in r.stdout
    pd.DataFrame({"claim": ["a", "b"], "x": [1.5, 2.0]}).to_csv(new / "t.csv", index=False)
    r = check()
    assert r.returncode == 1 and "t.csv: differs in ['x'], first at row 1" in r.stdout
    pd.DataFrame({"claim": ["a", "b"]}).to_csv(new / "t.csv", index=False)
    r = check()
    assert r.returncode == 1 and "columns lost ['x']" in r.stdout


def test_the_command_line_names_what_differs_from_the_defaults(tmp_path):
    exp = experiment(tmp_path / "t.md")
    exp.default_coflows = 200
    cmd = writer.command
    assert cmd(exp, writer.Options("o", "t", coflows=200)) == "coflowkit reproduce toy --out o"
    assert cmd(exp, writer.Options("o", "t", coflows=None)).endswith("--coflows all")
    opts = writer.Options("o dir", "t", coflows=5, transforms=("batch",), engine="exact")
    assert cmd(exp, opts) == (
        "coflowkit reproduce toy --out 'o dir' --coflows 5 --transform batch --engine exact"
    )
    exp.default_decisions = "1"
    same = writer.Options("o", "t", coflows=200, decisions="1")
    assert cmd(exp, same) == "coflowkit reproduce toy --out o"
    other = writer.Options("o", "t", coflows=200, decisions="event")
    assert cmd(exp, other) == "coflowkit reproduce toy --out o --decisions event"


def test_a_decision_interval_is_passed_to_every_policy_in_canonical_form():
    from coflowkit.experiments import common

    assert common.decision_params("event") == ()
    assert common.decision_params(None) == ()
    want = (("realloc", "interval"), ("decision_s", "0.5"))
    assert common.decision_params(" 0.50 ") == want
    assert common.parse_decisions("1.0") == "1"
    assert common.decisions_label("2") == "every 2 s"
    assert common.decisions_label("event") == "at every flow event"
