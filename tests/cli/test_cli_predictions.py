"""A classifier's predictions on the command line: ``plausible evaluate RUN FILE`` reads a .npy
array or a table, the same classifier in each giving the same metrics, and ``plausible
aggregate --predictions FILE`` passes its probabilities to ``plausible.aggregate``; a bad file
exits 2 with one line naming it and its row or item, before any fit, and writes nothing."""

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible.cli import main

CLASSES = np.array(["a", "b", "c"])
ITEMS = np.array([f"i{i:02d}" for i in range(12)])
PROBS = np.random.default_rng(1).dirichlet(np.ones(3) * 0.7, size=ITEMS.size)


def run_cli(capsys, args):
    """``(exit status, stdout, stderr)`` of ``plausible args`` run in-process."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A folder with ``votes.csv`` (12 items, 3 classes), its saved run ``run.nc`` and one
    classifier as ``probs.npy`` (float32), ``probs.csv`` (rows shuffled, columns reversed),
    ``classes.csv`` (its top classes) and bad files for both commands."""
    folder = tmp_path_factory.mktemp("predictions")
    counts = np.random.default_rng(0).multinomial(5, [0.5, 0.3, 0.2], size=ITEMS.size)
    votes = pd.DataFrame(counts, columns=CLASSES)
    votes.insert(0, "item", ITEMS)
    votes.to_csv(folder / "votes.csv", index=False)
    pl.aggregate(votes, "dirichlet", draws=200, chains=2, seed=0).save(folder / "run.nc")
    np.save(folder / "probs.npy", PROBS.astype(np.float32))
    probs = pd.DataFrame(PROBS, columns=CLASSES)[list(CLASSES[::-1])]
    probs.insert(0, "item", ITEMS)
    probs.iloc[::-1].to_csv(folder / "probs.csv", index=False)
    pd.DataFrame({"task": ITEMS, "prediction": CLASSES[PROBS.argmax(axis=1)]}).to_csv(
        folder / "classes.csv", index=False)

    np.save(folder / "short.npy", PROBS[:-1])
    off = PROBS.copy()
    off[7] *= 0.5
    np.save(folder / "off.npy", off)
    probs.rename(columns={"b": "bee"}).to_csv(folder / "unknown_class.csv", index=False)
    pd.DataFrame({"item": ITEMS, "prediction": ["a"] * 5 + ["dog"] + ["b"] * 6}).to_csv(
        folder / "unknown_prediction.csv", index=False)
    probs.drop(index=3).to_csv(folder / "missing_item.csv", index=False)
    return folder


BAD_FILES = [  # (file, words of the message), for evaluate and for aggregate --predictions
    ("short.npy", ["short.npy: expected shape (12, 3)", "got (11, 3)"]),
    ("off.npy", ["off.npy, row 7 (item 'i07')", "sum to 0.5"]),
    ("unknown_class.csv", ["column 'bee' is not one of the classes"]),
    ("missing_item.csv", ["no row for item 'i03'"]),
]


def test_npy_and_csv_probabilities_and_csv_classes_give_the_same_metrics(files, tmp_path,
                                                                          capsys):
    metrics = {}
    for name in ("probs.npy", "probs.csv", "classes.csv"):
        code, _, _ = run_cli(capsys, ["evaluate", files / "run.nc", files / name, "-o",
                                      tmp_path / f"{name}.metrics.csv"])
        assert code == 0, name
        metrics[name] = pd.read_csv(tmp_path / f"{name}.metrics.csv").set_index("metric")
    pd.testing.assert_frame_equal(metrics["probs.npy"], metrics["probs.csv"])
    assert list(metrics["probs.npy"].index) == ["ua_top1_accuracy", "ua_top2_accuracy",
                                                "ua_top3_accuracy"]
    # the classifier's top class is its top-1 set: one accuracy, read either way
    np.testing.assert_allclose(metrics["classes.csv"].loc["ua_accuracy"],
                               metrics["probs.npy"].loc["ua_top1_accuracy"])
    expected = pl.load(files / "run.nc").evaluate(PROBS)
    np.testing.assert_allclose(metrics["probs.npy"].to_numpy(), expected.to_numpy())


@pytest.mark.parametrize(("name", "words"), BAD_FILES + [
    ("unknown_prediction.csv", ["line 7 (item 'i05')", "prediction 'dog' is not one of the "
                                                        "classes"])])
def test_evaluate_refuses_a_bad_file_in_one_line_and_writes_nothing(files, tmp_path, capsys,
                                                                    name, words):
    output = tmp_path / "metrics.csv"
    code, out, err = run_cli(capsys, ["evaluate", files / "run.nc", files / name, "-o", output])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert all(word in err for word in words), err
    assert not output.exists()


@pytest.mark.parametrize(("name", "words"), BAD_FILES + [
    ("classes.csv", ["probabilities per class are required"])])
def test_aggregate_refuses_a_bad_predictions_file_before_any_fit(files, tmp_path, capsys,
                                                                  monkeypatch, name, words):
    monkeypatch.setattr("plausible.aggregation.aggregate", lambda *a, **k: pytest.fail("fitted"))
    output, saved = tmp_path / "out.csv", tmp_path / "run.nc"
    code, _, err = run_cli(capsys, ["aggregate", files / "votes.csv", "--predictions",
                                    files / name, "-o", output, "--save", saved])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"plausible: error: --predictions {files / name}")
    assert all(word in err for word in words), err
    assert not output.exists() and not saved.exists()


def test_aggregate_passes_the_probabilities_in_the_labels_item_and_class_order(files,
                                                                              capsys,
                                                                              monkeypatch):
    """probs.csv has its rows reversed and its columns in reverse class order."""
    passed = {}

    def aggregate(data, model=None, **keywords):
        passed.update(keywords)
        raise ValueError("stopped before the fit")

    monkeypatch.setattr("plausible.aggregation.aggregate", aggregate)
    code, _, err = run_cli(capsys, ["aggregate", files / "votes.csv", "--predictions",
                                    files / "probs.csv"])
    assert code == 2 and "stopped before the fit" in err
    assert passed["predictions"].dtype == np.float64
    np.testing.assert_allclose(passed["predictions"], PROBS)


def test_aggregate_with_a_classifier_prior_writes_its_results_and_evaluate_warns(
        files, tmp_path, capsys):
    """Labels (the default label model takes a classifier prior): three per item, from
    annotators right three times in four; evaluating the same classifier against the run
    warns that its truth was built from it."""
    rng = np.random.default_rng(2)
    truth = PROBS.argmax(axis=1)
    rows = [(item, f"w{w}", CLASSES[truth[i] if rng.random() < 0.75 else rng.integers(3)])
            for i, item in enumerate(ITEMS) for w in rng.choice(5, 3, replace=False)]
    pd.DataFrame(rows, columns=["task", "worker", "label"]).to_csv(tmp_path / "labels.csv",
                                                                  index=False)
    output = tmp_path / "out.csv"
    code, _, err = run_cli(capsys, ["aggregate", tmp_path / "labels.csv", "--predictions",
                                    files / "probs.npy", "-o", output, "--draws", 100,
                                    "--chains", 2, "--no-progress", "--save",
                                    tmp_path / "run.nc"])
    assert code == 0, err
    assert len(pd.read_csv(output)) == ITEMS.size
    code, _, err = run_cli(capsys, ["evaluate", tmp_path / "run.nc", files / "probs.npy"])
    assert code == 0 and err.count("\n") == 1 and "took as its prior" in err


def test_votes_with_predictions_fit_the_votes_model_that_takes_them(files, tmp_path, capsys):
    """The default for votes (Dirichlet: each item's vote distribution) has no true class for
    a classifier to predict; with --predictions the command line fits the votes model that
    has one, as pl.aggregate does."""
    assert pl.aggregation.default_model(pl.data.Votes.from_counts([[1, 2]]),
                                        predictions=True) == "votes-dawid-skene"
    output = tmp_path / "out.csv"
    code, out, err = run_cli(capsys, ["aggregate", files / "votes.csv", "--predictions",
                                      files / "probs.csv", "-o", output, "--draws", 100,
                                      "--chains", 2, "--no-progress"])
    assert code == 0, err
    assert "votes-dawid-skene model (default for the format with --predictions)" in out
    assert len(pd.read_csv(output)) == ITEMS.size
