"""The ``plausible certainty`` command line on small files and the toy data set."""

import json

import numpy as np
import pandas as pd
import pytest

from plausible.cli import main

FAST = ["--draws", "200", "--chains", "2", "--no-progress"]


def test_help_explains_formats(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["certainty", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "selectors" in text and "--reliability" in text and "certainty_top1" in text


def test_votes_csv_writes_one_row_per_item(tmp_path, capsys):
    votes = pd.DataFrame({"item": ["a", "b", "c"], "cat": [9, 3, 0], "dog": [1, 3, 0], "fox": [0, 0, 5]})
    votes.to_csv(tmp_path / "votes.csv", index=False)
    out = tmp_path / "nested" / "certainty.csv"
    assert main(["certainty", str(tmp_path / "votes.csv"), "-o", str(out), *FAST]) == 0
    result = pd.read_csv(out)
    assert list(result["item"]) == ["a", "b", "c"]
    assert result["top_class"][0] == "cat" and result["top_class"][2] == "fox"
    assert result["top_class"][1] in ("cat", "dog")  # a 3-3 tie
    assert result.loc[0, "certainty_top1"] > result.loc[1, "certainty_top1"]
    assert "Annotation certainty" in capsys.readouterr().out


def test_rankings_json_uses_prirn(tmp_path, capsys):
    (tmp_path / "r.json").write_text(json.dumps([[[[0], [1, 2]], [[0, 1]]], [[[2]]]]))
    assert main(["certainty", str(tmp_path / "r.json"), "--reliability", "20", *FAST]) == 0
    assert "PrIRN model, reliability 20" in capsys.readouterr().out


def test_toy_dataset_runs_without_data(tmp_path):
    out = tmp_path / "toy.csv"
    assert main(["certainty", "--dataset", "toy", "-o", str(out), *FAST]) == 0
    frame = pd.read_csv(out)
    assert len(frame) == 1000
    assert np.all((frame["certainty_top1"] > 0.3) & (frame["certainty_top1"] <= 1))


def test_bad_input_is_a_clear_error_and_writes_nothing(tmp_path, capsys):
    pd.DataFrame({"item": ["a", "b"], "x": [1, -2], "y": [0, 3]}).to_csv(tmp_path / "bad.csv", index=False)
    out = tmp_path / "never.csv"
    assert main(["certainty", str(tmp_path / "bad.csv"), "-o", str(out), *FAST]) == 2
    assert "item 'b'" in capsys.readouterr().err
    assert not out.exists()
    assert main(["certainty", str(tmp_path / "missing.csv"), *FAST]) == 2
    (tmp_path / "votes.txt").write_text("1 2 3")
    assert main(["certainty", str(tmp_path / "votes.txt"), *FAST]) == 2
    assert "unknown format '.txt'" in capsys.readouterr().err


def test_sharded_store_equals_in_process_and_resumes(tmp_path, capsys):
    """--store runs shards in-process; --workers 2 on a fresh store gives the same CSV; a
    re-run on a finished store skips every shard."""
    counts = np.random.default_rng(0).multinomial(6, [0.5, 0.3, 0.2], size=12)
    np.save(tmp_path / "votes.npy", counts)
    common = ["certainty", str(tmp_path / "votes.npy"), "--shard-size", "5", *FAST]
    assert main([*common, "--store", str(tmp_path / "a"), "-o", str(tmp_path / "a.csv")]) == 0
    assert main([*common, "--store", str(tmp_path / "b"), "--workers", "2",
                 "-o", str(tmp_path / "b.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))
    capsys.readouterr()
    assert main([*common, "--store", str(tmp_path / "a")]) == 0
    assert "3 already complete" in capsys.readouterr().out
    assert main([*common, "--store", str(tmp_path / "a"), "--seed", "1"]) == 2
    assert "another run" in capsys.readouterr().err


def test_bad_scheduler_address_is_reported(tmp_path, capsys):
    np.save(tmp_path / "votes.npy", np.array([[3, 1], [0, 4]]))
    assert main(["certainty", str(tmp_path / "votes.npy"), "--scheduler", "tcp://127.0.0.1:1",
                 *FAST]) == 2
    assert "cannot reach a Dask scheduler" in capsys.readouterr().err
