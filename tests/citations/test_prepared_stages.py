"""``benchmarks/prepared_stages.py``: every stage it names is timed, and they add up."""

import json

import pytest


@pytest.fixture(scope="module")
def stages_script(benchmark_script):
    return benchmark_script("prepared_stages.py")


def test_stages_all_run_and_add_up_to_the_call(stages_script, tmp_path, capsys):
    out = tmp_path / "stages.json"
    code = stages_script.main(
        ["--docs", "100", "--answers", "2", "--rounds", "1", "--peer-python",
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
    import citekit._citations.align as align_module

    before = align_module.batch_records
    timers = stages_script._StageTimers()
    with timers:
        assert align_module.batch_records is not before
    assert align_module.batch_records is before


@pytest.mark.parametrize(
    "argv, name",
    [
        (["--rounds", "0"], "--rounds"),
        (["--docs", "30"], "--docs"),
        (["--answers", "21"], "--answers"),
        (["--target", "0"], "--target"),
    ],
)
def test_bad_arguments_are_named(stages_script, capsys, argv, name):
    with pytest.raises(SystemExit):
        stages_script.main(argv)
    assert name in capsys.readouterr().err
