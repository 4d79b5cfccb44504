"""The command line: ``plausible aggregate`` on every format, the same per-item results as
``pl.aggregate``, ``plausible evaluate``, and every bad input ending in exit status 2 with one
line naming the culprit, no traceback and no output file."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible.cli import main

FAST = ["--draws", "100", "--chains", "2", "--no-progress"]


def crowd_table(seed=0, n_items=40, n_classes=2, n_workers=6, per_item=4):
    """A crowd-kit style table with string task, worker and label ids."""
    rng = np.random.default_rng(seed)
    names = np.array(["no", "yes", "maybe", "never"][:n_classes])
    rows = []
    for i in range(n_items):
        truth = rng.integers(n_classes)
        for w in rng.choice(n_workers, per_item, replace=False):
            label = truth if rng.random() < 0.75 else rng.integers(n_classes)
            rows.append((f"task-{i:03d}", f"worker-{w}", names[label]))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def run_cli(tmp_path, capsys, args):
    """``(exit status, stdout, stderr)`` of ``plausible args`` run in-process."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_help_and_version(capsys):
    assert main(["aggregate", "--help"]) == 0
    text = capsys.readouterr().out
    said = " ".join(text.split())
    for kind, name in pl.aggregation.DEFAULT_MODELS.items():  # the defaults the front door fits
        assert f"{name} for {kind.split()[0].replace('_', ' ')}" in said, (kind, name)
    assert f"{pl.models.ordinal_model('labels')} with --ordinal" in said
    assert "task, worker, label" in text and "certainty_top1" in text and "selectors" in text
    assert main(["--version"]) == 0 and pl.__version__ in capsys.readouterr().out


def test_the_help_names_the_models_from_the_registry(capsys):
    """The help texts write no model's name (plausible/cli/parser.py holds none): they read
    the registry, so a model added or renamed there is named in the help."""
    from plausible.cli import parser

    source = Path(parser.__file__).read_text()
    assert not [name for name in pl.models.available().index if name in source]
    assert main(["aggregate", "--help"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    chain = [name for name in pl.models.available("labels").index
             if pl.distributed.runs_on_cluster(name)]
    assert f"any of {', '.join(chain)}" in said and f"({', '.join(chain)}; --model)" in said
    assert parser.CHAIN_MODELS not in said
    assert f"where {', '.join(parser.models_taking('scale'))} censors" in said
    assert f"the {' and '.join(parser.models_taking('alpha'))} models" in said


@pytest.mark.parametrize("model", ["dirichlet", "annotator-beta", "glad", "su-difficulty"])
def test_cli_and_aggregate_give_the_same_items_keyed_by_original_ids(tmp_path, capsys, model):
    table = crowd_table(seed=1)
    table.to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "out.csv"
    code, _, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model", model,
                                            "-o", out, "--seed", 3, *FAST])
    assert code == 0
    from_cli = pd.read_csv(out, dtype={"item": str, "top_class": str})
    result = pl.aggregate(table, model, draws=100, chains=2, seed=3)
    expected = result.to_frame()
    assert result.model == model
    assert list(from_cli["item"]) == sorted(set(table["task"]), key=list(table["task"]).index)
    assert set(from_cli["top_class"]) <= {"no", "yes"}
    pd.testing.assert_frame_equal(from_cli, expected, check_dtype=False)


def test_long_file_with_integer_ids_is_read_as_labels_not_counts(tmp_path, capsys):
    table = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": [7, 8, 9, 7, 8, 9],
                          "label": [0, 0, 1, 1, 1, 1]})
    table.to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "out.csv"
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv",
                                               "--model", "dirichlet", "-o", out, *FAST])
    assert code == 0
    frame = pd.read_csv(out)
    assert list(frame["item"]) == [1, 2]
    assert list(frame.columns[4:]) == ["plausibility_0", "plausibility_1"]
    assert list(frame["top_class"]) == [0, 1]


def test_wide_votes_rankings_and_ratings_files(tmp_path, capsys):
    votes = pd.DataFrame({"item": ["a", "b", "c"], "cat": [9, 3, 0], "dog": [1, 3, 0],
                          "fox": [0, 0, 5]})
    votes.to_csv(tmp_path / "votes.tsv", index=False, sep="\t")
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "votes.tsv",
                                               "-o", tmp_path / "v.csv", *FAST])
    assert code == 0 and "dirichlet model (default for the format)" in text
    frame = pd.read_csv(tmp_path / "v.csv")
    assert list(frame["item"]) == ["a", "b", "c"] and list(frame["top_class"][[0, 2]]) == ["cat", "fox"]
    (tmp_path / "r.json").write_text(json.dumps([[[[0], [1, 2]], [[0, 1]]], [[[2]]]]))
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "r.json", "--reliability",
                                               20, *FAST])
    assert code == 0 and "prirn model" in text
    ratings = pd.DataFrame({"item": np.repeat(["x", "y", "z"], 3), "worker": ["u", "v", "w"] * 3,
                            "score": [80, 70, 90, 10, 20, 5, 55, 45, 60.0]})
    ratings.to_parquet(tmp_path / "ratings.parquet")
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "ratings.parquet", *FAST])
    assert code == 2 and "--threshold" in err
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "ratings.parquet",
                                               "--threshold", 50, "-o", tmp_path / "s.csv", *FAST])
    assert code == 0 and "normal-inverse-gamma" in text
    assert list(pd.read_csv(tmp_path / "s.csv")["item"]) == ["x", "y", "z"]
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "ratings.parquet",
                                              "--threshold", 50, "--scale", 0, 100, *FAST])
    assert code == 2 and "--scale applies to censored-normal-inverse-gamma" in err
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "ratings.parquet",
                                              "--threshold", 50, "--model",
                                              "censored-normal-inverse-gamma", *FAST])
    assert code == 2 and "--scale" in err
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "ratings.parquet",
                                               "--threshold", 50, "--model",
                                               "censored-normal-inverse-gamma", "--scale", 0, 90,
                                               "--resolution", 5, "--check", *FAST])
    assert code == 0 and "share_at_ceiling" in text


def test_toy_output_top_class_is_the_class_certainty_top1_describes(tmp_path, capsys):
    out, saved = tmp_path / "toy.csv", tmp_path / "toy.nc"
    code, _, _ = run_cli(tmp_path, capsys, ["aggregate", "--dataset", "toy", "-o", out,
                                            "--save", saved, *FAST])
    assert code == 0
    frame = pd.read_csv(out)
    assert len(frame) == 1000
    shares = pl.metrics.label_certainty(pl.load(saved).trace)
    rows = np.arange(len(frame))
    top = pd.Index(shares["class"].values).get_indexer(frame["top_class"])
    np.testing.assert_array_equal(shares.values[rows, top], frame["certainty_top1"])
    np.testing.assert_array_equal(shares.values.max(axis=1), frame["certainty_top1"])
    mean = pl.metrics.posterior_mean(pl.load(saved).trace).values
    np.testing.assert_allclose(mean[rows, top], frame["probability_top_class"], rtol=1e-12)


def test_dermatology_output_top_class_is_the_class_certainty_top1_describes(tmp_path, capsys,
                                                                           data_home):
    out = tmp_path / "derm.csv"
    code, _, _ = run_cli(tmp_path, capsys, ["aggregate", "--dataset", "dermatology",
                                            "--data-home", data_home, "-o", out, "--show", 0,
                                            "--seed", 5, *FAST])
    assert code == 0
    frame = pd.read_csv(out, usecols=["item", "top_class", "certainty_top1"])
    derm = pl.data.load_dermatology(data_home)
    trace = pl.sample(pl.models.prirn.build(derm.rankings), draws=100, chains=2, seed=5,
                      progressbar=False)
    shares = pl.metrics.label_certainty(trace)
    top = pd.Index(shares["class"].values.astype(str)).get_indexer(frame["top_class"].astype(str))
    assert (top >= 0).all() and len(frame) == 1947
    rows = np.arange(len(frame))
    np.testing.assert_array_equal(shares.values[rows, top], frame["certainty_top1"])
    np.testing.assert_array_equal(shares.values.max(axis=1), frame["certainty_top1"])


def test_convergence_is_not_claimed_when_not_measured(tmp_path, capsys):
    crowd_table(seed=2).to_csv(tmp_path / "labels.csv", index=False)
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--draws", 1,
                                               "--chains", 2, "--no-progress"])
    assert code == 0 and "Not assessed" in text and "converged" not in text.replace(
        "not converged", "").lower().replace("nothing to converge", "")
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--draws", 50,
                                               "--chains", 1, "--no-progress"])
    assert code == 0 and "1 chain" in text and "inf" not in text
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", "--dataset", "toy", *FAST])
    assert code == 0 and "Exact independent posterior draws" in text


def test_evaluate_scores_and_predictions_against_a_saved_aggregation(tmp_path, capsys):
    table = crowd_table(seed=4, n_classes=3)
    table.to_csv(tmp_path / "labels.csv", index=False)
    saved = tmp_path / "run.nc"
    code, _, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model",
                                            "dirichlet", "--save", saved, *FAST])
    assert code == 0
    result = pl.load(saved)
    items = result.plausibility["item"].values
    predictions = pd.DataFrame({"item": items, "prediction": result.labels()["top_class"].values})
    predictions.to_csv(tmp_path / "pred.csv", index=False)
    code, text, _ = run_cli(tmp_path, capsys, ["evaluate", saved, tmp_path / "pred.csv",
                                               "-o", tmp_path / "m.csv"])
    assert code == 0
    metrics = pd.read_csv(tmp_path / "m.csv").set_index("metric")
    expected = result.evaluate(predictions.set_index("item")["prediction"])
    np.testing.assert_allclose(metrics.loc["ua_accuracy", "mean"], expected.loc["ua_accuracy", "mean"])
    scores = pd.DataFrame(np.random.default_rng(0).random((items.size, 3)),
                          columns=result.plausibility["class"].values)
    scores.insert(0, "item", items)
    scores.to_csv(tmp_path / "scores.csv", index=False)
    code, text, _ = run_cli(tmp_path, capsys, ["evaluate", saved, tmp_path / "scores.csv",
                                               "--k", 1, 2])
    assert code == 0 and "ua_top2_accuracy" in text and "ua_top3" not in text
    code, _, err = run_cli(tmp_path, capsys, ["evaluate", saved, tmp_path / "labels.csv"])
    assert code == 2 and "item 'task-000' appears twice" in err and "labels.csv" in err


def test_a_saved_run_warm_starts_the_next_fit(tmp_path, capsys):
    table = crowd_table(seed=7, n_classes=3)
    table.iloc[:-6].to_csv(tmp_path / "before.csv", index=False)
    table.to_csv(tmp_path / "after.csv", index=False)
    saved = tmp_path / "before.nc"
    code, _, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "before.csv", "--model",
                                            "dawid-skene", "--save", saved, *FAST])
    assert code == 0
    code, text, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "after.csv", "--init",
                                               saved, "--save", tmp_path / "after.nc", *FAST])
    assert code == 0 and "dawid-skene model" in text  # the saved run's model
    assert pl.load(tmp_path / "after.nc").trace.posterior.attrs["tune"] == 10
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "after.csv", "--init",
                                              tmp_path / "after.csv", *FAST])
    assert code == 2 and "--init" in err and "saved aggregation" in err
    code, _, err = run_cli(tmp_path, capsys, ["next", tmp_path / "after.csv", "--budget", 3,
                                              "--init", saved, "--model", "glad",
                                              "--draws", 50, "--chains", 2])
    assert code == 2 and "same model" in err


def bad_cases(tmp_path):
    """``(name, argv, words the message must contain, path that must not exist)``."""
    crowd_table().to_csv(tmp_path / "labels.csv", index=False)
    labels = tmp_path / "labels.csv"
    (tmp_path / "header.csv").write_text("task,worker,label\n")
    (tmp_path / "empty.json").write_text("[]")
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "store_file").write_text("not a store")
    (tmp_path / "taken.csv").write_text("keep me")
    pd.DataFrame({"id": [1, 2], "rater": [1, 2], "answer": [0, 1]}).to_csv(
        tmp_path / "unnamed.csv", index=False)
    pd.DataFrame({"item": ["a", "b"], "x": [1, -2], "y": [0, 3]}).to_csv(
        tmp_path / "negative.csv", index=False)
    pd.DataFrame({"task": ["a", "a"], "worker": ["u", None], "label": [1, 0]}).to_csv(
        tmp_path / "hole.csv", index=False)
    pd.DataFrame({"task": ["task-000", "task-001"], "true_label": ["no", "often"]}).to_csv(
        tmp_path / "gold_class.csv", index=False)
    pd.DataFrame({"task": ["task-000", "task-999"], "true_label": ["no", "yes"]}).to_csv(
        tmp_path / "gold_item.csv", index=False)
    pd.DataFrame({"task": ["task-000"], "answer": ["no"]}).to_csv(
        tmp_path / "gold_columns.csv", index=False)
    out = tmp_path / "out.csv"
    return [
        ("gold class outside the classes", [labels, "--gold", tmp_path / "gold_class.csv", "-o",
                                            out], ["gold_class.csv", "line 3", "'often'"], out),
        ("gold item without labels", [labels, "--gold", tmp_path / "gold_item.csv", "-o", out],
         ["gold_item.csv", "line 3", "'task-999'"], out),
        ("gold without a class column", [labels, "--gold", tmp_path / "gold_columns.csv", "-o",
                                         out], ["gold_columns.csv", "true_label", "answer"], out),
        ("chains 0", [labels, "--chains", 0, "-o", out], ["--chains", ">= 1"], out),
        ("draws 0", [labels, "--draws", 0, "-o", out], ["--draws", ">= 1"], out),
        ("workers 0", [labels, "--workers", 0, "-o", out], ["--workers", ">= 1"], out),
        ("output is a directory", [labels, "-o", tmp_path / "a_dir"], ["a_dir", "directory"], None),
        ("store is a file", [labels, "--model", "dirichlet", "--store", tmp_path / "store_file",
                             "-o", out], ["store_file", "--store"], out),
        ("output exists", [labels, "-o", tmp_path / "taken.csv"], ["taken.csv", "--force"], None),
        ("header only", [tmp_path / "header.csv", "-o", out], ["header.csv", "no rows"], out),
        ("empty rankings", [tmp_path / "empty.json", "-o", out], ["empty.json", "no items"], out),
        ("ambiguous long table", [tmp_path / "unnamed.csv", "-o", out],
         ["unnamed.csv", "rater", "annotator"], out),
        ("negative count", [tmp_path / "negative.csv", "-o", out], ["negative.csv", "item 'b'"], out),
        ("missing annotator", [tmp_path / "hole.csv", "-o", out], ["hole.csv", "worker", "row 1"], out),
        ("missing file", [tmp_path / "nope.csv", "-o", out], ["nope.csv", "no such file"], out),
        ("unknown suffix", [tmp_path / "labels.txt", "-o", out], ["labels.txt"], out),
        ("unknown model", [labels, "--model", "nope", "-o", out], ["'nope'", "dirichlet"], out),
        ("wrong model for format", [labels, "--model", "prirn", "-o", out], ["prirn", "rankings",
                                                                              "labels"], out),
        ("sharding a dependent model", [labels, "--model", "easy-hard", "--workers", 2, "-o", out],
         ["easy-hard", "independent"], out),
        ("negative reliability", [labels, "--reliability", -1, "-o", out], ["--reliability"], out),
        ("draws neither auto nor a number", [labels, "--draws", "many", "-o", out],
         ["--draws", "'auto'"], out),
        ("unknown column", [labels, "--label", "answer", "-o", out], ["answer", "columns"], out),
        ("unknown output extension", [labels, "-o", tmp_path / "out.xlsx"],
         ["out.xlsx", "'.xlsx'", ".parquet"], tmp_path / "out.xlsx"),
        ("trace saved as a table", [labels, "--save", tmp_path / "run.csv", "-o", out],
         ["--save", "run.csv", ".nc"], out),
        ("output folder not writable", [labels, "-o", "/proc/out.csv"],
         ["/proc/out.csv", "cannot write in /proc"], None),
    ]


def test_without_a_model_labels_get_the_default_and_auto_fits_every_candidate(tmp_path, capsys):
    crowd_table(n_classes=3).to_csv(tmp_path / "labels.csv", index=False)
    code, out, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv",
                                              "-o", tmp_path / "out.csv", *FAST])
    assert code == 0 and "learned-prior-dawid-skene model (default for the format)" in out
    assert f"chosen: {pl.aggregation.DEFAULT_REASON}" in out
    code, out, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model",
                                              "auto", "-o", tmp_path / "auto.csv", *FAST])
    assert code == 0 and "model (chosen by PSIS-LOO)" in out
    chosen = out.split("chosen: ", 1)[1].split(":", 1)[0]
    assert chosen in pl.aggregation.AUTO_CANDIDATES["labels"]
    assert f"{chosen} model (chosen by PSIS-LOO)" in out and "\nplausibility: " in out
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model",
                                              "auto", "--workers", 2, "-o",
                                              tmp_path / "sharded.csv", *FAST])
    assert code == 2 and "name it with --model" in err
    # the default model's chain runs over shards on a cluster, not in a store alone
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--store",
                                              tmp_path / "store", "-o", tmp_path / "sharded.csv",
                                              *FAST])
    assert code == 2 and "'learned-prior-dawid-skene' runs one chain over shards" in err
    assert "--workers" in err and not (tmp_path / "sharded.csv").exists()


def test_ordinal_grades_get_the_ordinal_model_and_text_grades_need_their_order(tmp_path,
                                                                              capsys):
    table = crowd_table(n_classes=3)
    grades = table.assign(label=table["label"].map({"no": 0, "maybe": 1, "yes": 2}))
    grades.to_csv(tmp_path / "grades.csv", index=False)
    code, out, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "grades.csv", "--ordinal",
                                              "-o", tmp_path / "out.csv", *FAST])
    assert code == 0 and f"{pl.models.ordinal_model('labels')} model (--ordinal)" in out
    table.to_csv(tmp_path / "text.csv", index=False)
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "text.csv", "--ordinal",
                                              "-o", tmp_path / "text-out.csv", *FAST])
    assert code == 2 and "--classes" in err and len(err.strip().splitlines()) == 1


def test_draws_auto_is_the_default_and_refused_for_shards(tmp_path, capsys):
    crowd_table().to_csv(tmp_path / "labels.csv", index=False)
    code, out, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model",
                                              "dawid-skene", "--chains", 2,  # auto: the default
                                              "--no-progress", "-o", tmp_path / "out.csv"])
    assert code == 0 and "(--draws auto: converged)" in out
    assert "plausibility: the posterior probability that each class is the item's one true" in out
    code, out, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model",
                                              "dirichlet", "--workers", 1, "--chains", 2,
                                              "--no-progress", "-o", tmp_path / "shards.csv"])
    assert code == 0 and "2 chains x 1000 draws" in out  # shards: exact draws, 1000
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model",
                                              "dirichlet", "--draws", "auto", "--workers", 2,
                                              "-o", tmp_path / "sharded.csv"])
    assert code == 2 and "--draws auto" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "sharded.csv").exists()


def test_gold_items_are_clamped_written_saved_and_reported(tmp_path, capsys):
    table = crowd_table(n_items=30)
    table.to_csv(tmp_path / "labels.csv", index=False)
    # the gold contradicts the crowd on task-000: the clamp must win
    majority = table[table.task == "task-000"].label.mode()[0]
    other = "yes" if majority == "no" else "no"
    pd.DataFrame({"task": ["task-000", "task-001"], "true_label": [other, "yes"]}).to_csv(
        tmp_path / "gold.csv", index=False)
    code, out, _ = run_cli(tmp_path, capsys, [
        "aggregate", tmp_path / "labels.csv", "--model", "one-coin", "--gold",
        tmp_path / "gold.csv", "--save", tmp_path / "run.nc", "-o", tmp_path / "out.csv",
        *FAST])
    assert code == 0 and "2 items of known class" in out
    frame = pd.read_csv(tmp_path / "out.csv").set_index("item")
    assert frame.loc["task-000", "known_class"] == other
    assert frame.loc["task-000", "top_class"] == other
    assert frame.loc["task-000", f"plausibility_{other}"] == 1.0
    assert frame["known_class"].notna().sum() == 2
    loaded = pl.load(tmp_path / "run.nc")
    assert loaded.data.n_known == 2
    quality = pl.diagnostics.annotator_quality(loaded.trace, loaded.data)
    assert quality["gold_labels"].sum() == (table.task.isin(["task-000", "task-001"])).sum()


def test_every_bad_input_exits_2_with_one_line_naming_the_culprit(tmp_path, capsys):
    (tmp_path / "labels.txt").write_text("1 2 3")
    for name, argv, words, path in bad_cases(tmp_path):
        code, out, err = run_cli(tmp_path, capsys, ["aggregate", *argv, *FAST])
        assert code == 2, name
        assert len(err.strip().splitlines()) == 1, (name, err)
        for word in words:
            assert word in err, (name, word, err)
        if path is not None:
            assert not path.exists(), name
    assert (tmp_path / "taken.csv").read_text() == "keep me"


def test_bad_inputs_in_a_subprocess_print_no_traceback(tmp_path):
    (tmp_path / "header.csv").write_text("task,worker,label\n")
    for argv in (["aggregate", str(tmp_path / "header.csv")],
                 ["aggregate", "--dataset", "toy", "--chains", "0"]):
        done = subprocess.run([sys.executable, "-m", "plausible.cli", *argv], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_output_into_a_closed_pipe_still_writes_the_file(tmp_path):
    out = tmp_path / "toy.csv"
    process = subprocess.Popen(
        [sys.executable, "-m", "plausible.cli", "aggregate", "--dataset", "toy", "-o", str(out),
         "--show", "200", *FAST], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()  # like `| head -1`
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and "Traceback" not in err
    assert len(pd.read_csv(out)) == 1000


def test_output_is_refused_before_sampling(tmp_path, capsys, monkeypatch):
    """A bad output path stops the run before any model is built."""
    crowd_table().to_csv(tmp_path / "labels.csv", index=False)
    monkeypatch.setattr("plausible.aggregation.aggregate", lambda *a, **k: pytest.fail("sampled"))
    for output in (tmp_path / "out.xlsx", "/proc/out.csv", tmp_path / "noext"):
        code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv",
                                                  "-o", output, *FAST])
        assert code == 2 and str(output) in err


def test_save_and_output_create_their_folders(tmp_path, capsys):
    """The output checks accept a folder that is not there yet, so the writes create it (a
    trace saved into a new folder once failed after the whole fit)."""
    saved, output = tmp_path / "runs" / "toy.nc", tmp_path / "tables" / "toy.csv"
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", "--dataset", "toy", "--save", saved,
                                              "-o", output, *FAST])
    assert code == 0, err
    assert pl.load(saved).data.n_items == len(pd.read_csv(output)) == 1000


def test_json_and_tsv_outputs_hold_the_csv_rows(tmp_path, capsys):
    crowd_table().to_csv(tmp_path / "labels.csv", index=False)
    frames = {}
    for suffix in ("csv", "tsv", "json"):
        out = tmp_path / f"out.{suffix}"
        code, _, _ = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "labels.csv", "--model",
                                                "dirichlet", "-o", out, *FAST, "--seed", 1])
        assert code == 0
        frames[suffix] = (pd.read_json(out) if suffix == "json" else
                          pd.read_csv(out, sep="\t" if suffix == "tsv" else ","))
    pd.testing.assert_frame_equal(frames["csv"], frames["tsv"])
    pd.testing.assert_frame_equal(frames["csv"], frames["json"], check_dtype=False)


def test_next_says_what_it_writes_and_that_its_estimates_are_thinned(tmp_path, capsys):
    assert main(["next", "--help"]) == 0
    text = capsys.readouterr().out
    assert "information_gain" in text and "plausibility_<class>" not in text
    crowd_table().to_csv(tmp_path / "labels.csv", index=False)
    code, out, _ = run_cli(tmp_path, capsys, ["next", tmp_path / "labels.csv", "--model",
                                              "dawid-skene", "--budget", 3, "--draws", 300])
    assert code == 0 and "gains and certainty on 500 of the 1200 draws, thinned" in out


def test_force_overwrites_atomically(tmp_path, capsys):
    out = tmp_path / "toy.csv"
    out.write_text("old")
    assert run_cli(tmp_path, capsys, ["aggregate", "--dataset", "toy", "-o", out, "--force",
                                      *FAST])[0] == 0
    assert len(pd.read_csv(out)) == 1000
    assert [p.name for p in tmp_path.iterdir()] == ["toy.csv"]  # no temporary file left


def test_sharded_store_equals_in_process_resumes_and_cleans_up(tmp_path, capsys, monkeypatch):
    """--store runs shards in-process; --workers 2 on a fresh store gives the same CSV; a
    re-run on a finished store skips every shard; without --store the temporary store is
    removed."""
    counts = np.random.default_rng(0).multinomial(6, [0.5, 0.3, 0.2], size=12)
    np.save(tmp_path / "votes.npy", counts)
    common = ["aggregate", tmp_path / "votes.npy", "--shard-size", 5, *FAST]
    assert run_cli(tmp_path, capsys, [*common, "--store", tmp_path / "a", "-o", tmp_path / "a.csv"])[0] == 0
    code, text, _ = run_cli(tmp_path, capsys, [*common, "--store", tmp_path / "b", "--workers", 2,
                                               "-o", tmp_path / "b.csv"])
    assert code == 0 and "Exact independent posterior draws" in text
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))
    code, text, _ = run_cli(tmp_path, capsys, [*common, "--store", tmp_path / "a"])
    assert code == 0 and "3 already complete" in text
    code, _, err = run_cli(tmp_path, capsys, [*common, "--store", tmp_path / "a", "--seed", 1])
    assert code == 2 and "another run" in err
    in_memory = pl.aggregate(pl.data.Votes.from_counts(counts), "dirichlet", draws=100, chains=2,
                             seed=0).to_frame()
    assert in_memory["top_class"].tolist() == pd.read_csv(tmp_path / "a.csv")["top_class"].tolist()
    private_tmp = tmp_path / "tmp"  # not the shared temp folder other test workers write to
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    assert run_cli(tmp_path, capsys, [*common, "-o", tmp_path / "c.csv", "--workers", 1])[0] == 0
    assert list(private_tmp.glob("plausible-shards-*")) == []


def test_bad_scheduler_address_is_reported(tmp_path, capsys):
    np.save(tmp_path / "votes.npy", np.array([[3, 1], [0, 4]]))
    code, _, err = run_cli(tmp_path, capsys, ["aggregate", tmp_path / "votes.npy", "--scheduler",
                                              "tcp://127.0.0.1:1", *FAST])
    assert code == 2 and "cannot reach a Dask scheduler" in err
