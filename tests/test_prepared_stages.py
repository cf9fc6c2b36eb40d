"""``benchmarks/prepared_stages.py``: every stage it names is timed, and they add up."""

import importlib.util
import json
import os

import pytest


@pytest.fixture(scope="module")
def stages_script():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "benchmarks", "prepared_stages.py")
    spec = importlib.util.spec_from_file_location("citekit_test_prepared_stages", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_stages_all_run_and_add_up_to_the_call(stages_script, tmp_path, capsys):
    out = tmp_path / "stages.json"
    code = stages_script.main(
        ["--docs", "30", "--answers", "2", "--rounds", "1", "--peer-python",
         str(tmp_path / "no-python"), "--json", str(out)]
    )
    assert code == 0
    figures = json.loads(out.read_text())
    stages = figures["stages_ms_per_call"]
    assert list(stages) == list(stages_script.STAGES)
    # every timed stage ran (a renamed stage method would leave its stage at zero)
    for stage in stages_script.STAGES:
        if stage != "rest":
            assert stages[stage] > 0, stage
    assert sum(stages.values()) == pytest.approx(figures["call_ms"])
    assert figures["kernel_stages_per_sentence_ms"] > 0
    assert "cite_right_per_sentence_ms" not in figures  # no peer interpreter given
    printed = capsys.readouterr()
    assert "not found: citekit only" in printed.err
    assert "records" in printed.out


def test_stage_timers_are_removed_afterwards(stages_script):
    from citekit.pipeline import Pipeline

    before = Pipeline._span_citations
    timers = stages_script._StageTimers()
    with timers:
        assert Pipeline._span_citations is not before
    assert Pipeline._span_citations is before


@pytest.mark.parametrize(
    "argv, name",
    [(["--rounds", "0"], "--rounds"), (["--docs", "0"], "--docs"), (["--target", "0"], "--target")],
)
def test_bad_arguments_are_named(stages_script, capsys, argv, name):
    with pytest.raises(SystemExit):
        stages_script.main(argv)
    assert name in capsys.readouterr().err
