"""``pl.aggregate`` and its result: every input format to the right container and default
model, ids end to end, labels / certainty / evaluate / check / to_frame, save and load."""

import tempfile
from pathlib import Path

import arviz as az
import matplotlib
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import plausible as pl
from plausible.data import tables

matplotlib.use("Agg")
FAST = {"draws": 60, "chains": 2, "seed": 1}


def crowd(n_items=30, classes=("ant", "bee", "cat"), seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        truth = rng.integers(len(classes))
        for w in rng.choice(5, 3, replace=False):
            label = truth if rng.random() < 0.8 else rng.integers(len(classes))
            rows.append((f"q{i}", f"ann-{w}", classes[label]))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


@pytest.mark.parametrize("frame, kind", [
    (pd.DataFrame({"task": ["a", "a"], "worker": ["u", "v"], "label": ["x", "y"]}), "labels"),
    (pd.DataFrame({"item": ["a", "a"], "annotator": ["u", "v"], "label": [1, 0]}), "labels"),
    (pd.DataFrame({"item": ["a", "a"], "annotator": ["u", "v"], "score": [1.5, 0.2]}), "ratings"),
    (pd.DataFrame({"item": ["a", "a"], "annotator": ["u", "u"], "label": [2, 0],
                   "rank": [1, 2]}), "rankings"),
    (pd.DataFrame({"item": ["a", "b"], "x": [3, 0], "y": [1, 2]}), "votes"),
])
def test_formats_are_recognised_from_the_columns(frame, kind):
    assert tables.infer_format(frame) == kind
    assert tables.format_of(tables.from_frame(frame)) == kind


def test_ambiguous_tables_are_refused_naming_the_columns():
    with pytest.raises(ValueError, match=r"\['id', 'rater', 'answer'\].*annotator="):
        tables.from_frame(pd.DataFrame({"id": [1], "rater": [2], "answer": [0]}))
    with pytest.raises(ValueError, match="both a label column"):
        tables.from_frame(pd.DataFrame({"task": [1], "worker": [1], "label": [0], "score": [1.0]}))
    with pytest.raises(ValueError, match="not numeric"):
        tables.from_frame(pd.DataFrame({"x": [1], "y": ["a"]}))
    named = tables.from_frame(pd.DataFrame({"id": [1, 1], "rater": [2, 3], "answer": [0, 1]}),
                              item="id", annotator="rater", label="answer")
    assert named.n_annotations == 2


def test_crosstab_keeps_task_ids_and_class_names():
    table = crowd()
    votes = tables.from_frame(pd.crosstab(table["task"], table["label"]))
    assert list(votes.classes) == ["ant", "bee", "cat"] and votes.items[0] == "q0"
    same = pl.data.Votes.from_counts(pd.crosstab(table["task"], table["label"]))
    assert list(same.items) == list(votes.items)


def test_string_ids_survive_and_the_default_model_is_said():
    table = crowd()
    result = pl.aggregate(table, "dawid-skene", **FAST)
    assert "plausibility: the posterior probability that each class is the item's one true" \
        in repr(result)
    votes = pl.aggregate(table, "dirichlet", **FAST)
    assert "distribution over the classes" in repr(votes) and "default" not in repr(votes)
    assert "default for votes" in repr(pl.aggregate(pl.data.Votes.from_labels(
        tables.from_frame(table)), **FAST))
    frame = result.to_frame()
    assert frame["item"].tolist() == list(dict.fromkeys(table["task"]))
    assert [c for c in frame.columns if c.startswith("plausibility_")] == [
        "plausibility_ant", "plausibility_bee", "plausibility_cat"]


def test_ordinal_labels_get_the_model_that_declares_it_reads_grades():
    """``ordinal=True`` fits the registry's model for ordered grades (no name written in the
    front door); a format that has none is refused by name."""
    grades = pd.DataFrame({"task": np.repeat(np.arange(12), 3),
                           "worker": np.tile(np.arange(3), 12),
                           "label": np.tile([0, 1, 1, 2, 2, 2, 1, 0, 0], 4)})
    result = pl.aggregate(grades, ordinal=True, draws=20, chains=1, seed=0)
    assert pl.models.entry(result.model).ordinal
    assert result.model == pl.models.ordinal_model("labels")
    with pytest.raises(ValueError, match="no model reads votes as ordered grades"):
        pl.aggregation.default_model(pl.data.Votes.from_labels(tables.from_frame(grades)),
                                     ordinal=True)


def test_the_default_for_labels_is_dawid_skene_with_a_learned_prior_and_says_why():
    table = crowd(n_items=80)
    result = pl.aggregate(table, seed=1)
    assert result.default and result.model == "learned-prior-dawid-skene"
    assert result.selection is None and result.members is None
    assert "(default for labels)" in repr(result)
    assert f"chosen: {pl.aggregation.DEFAULT_REASON}" in repr(result)
    assert result.trace.posterior.attrs["draws_stopped_by"] == "converged"
    assert result.convergence().converged


def test_auto_chooses_the_candidate_loo_ranks_first_and_a_save_keeps_why():
    """``model="auto"``: the chosen model is the converged candidate
    with the highest PSIS-LOO elpd, recomputed here from each candidate fitted alone with the
    same settings; on these data the two candidates that read a plausibility as one true class
    are stacked, with ``az.compare``'s stacking weights of those two alone, and every draw of
    the result is a draw of one of them in those proportions. The result says so and a saved
    run keeps the table, the reason and the members."""
    table = crowd(n_items=80)
    result = pl.aggregate(table, "auto", seed=1)
    candidates = pl.aggregation.AUTO_CANDIDATES["labels"]
    assert not result.default and result.selection.candidates == candidates
    elpd, alone = {}, {}
    for name in candidates:
        alone[name] = pl.aggregate(table, name, seed=1)
        if alone[name].convergence().status != "not converged":
            elpd[name] = pl.diagnostics.loo(alone[name].trace)
    assert elpd and result.model == max(elpd, key=lambda n: elpd[n].elpd)
    ranked = result.selection.table.dropna(subset=["elpd"])
    np.testing.assert_allclose(ranked["elpd"].to_numpy(), [elpd[n].elpd for n in ranked.index])
    same = [n for n in elpd if pl.models.entry(n).plausibility == pl.models.TRUE_CLASS_POSTERIOR]
    assert result.selection.stacked and set(result.selection.stack) == set(same)
    weights = az.compare({n: elpd[n] for n in same}, round_to="none")["weight"]
    for name in same:
        assert result.selection.stack[name] == pytest.approx(weights[name], abs=1e-6)
    mixed = result.trace.posterior["plausibility"].values  # (chain, draw, item, class)
    source = np.zeros(mixed.shape[:2], dtype=int)
    for place, name in enumerate(result.selection.stack):
        own = alone[name].trace.posterior["plausibility"].transpose(
            "chain", "draw", "item", "class").values
        for c in range(mixed.shape[0]):  # which of the chain's draws each mixed draw is
            hit = (mixed[c][:, None] == own[c][None]).all(axis=(2, 3)).any(axis=1)
            source[c][hit] = place + 1
    assert (source > 0).all()
    share = (source == 1).mean(axis=1)
    assert np.abs(share - result.selection.stack[result.model]).max() <= 1 / mixed.shape[1]
    assert (f"{result.model} model (chosen by PSIS-LOO among 3 candidates, stacked with 1 of "
            "the same meaning)") in repr(result)
    assert f"chosen: {result.model}: highest PSIS-LOO elpd among" in repr(result)
    assert result.convergence().converged and "glad: " in result.convergence().table.index[0]
    assert "votes:" in result.check(draws=40).text  # labels replicated from the mixture
    warm = pl.aggregate(table, "hierarchical-dawid-skene", init=result, draws=50, chains=2)
    assert warm.model == "hierarchical-dawid-skene"  # continued through the member
    with pytest.raises(ValueError, match="stacked with hierarchical-dawid-skene; this is "
                                         "dawid-skene"):
        pl.aggregate(table, "dawid-skene", init=result, **FAST)
    with tempfile.TemporaryDirectory() as folder:
        loaded = pl.load(result.save(Path(folder) / "run.nc"))
        page = loaded.report(Path(folder) / "report.html").read_text()
    assert loaded.selection.reason == result.selection.reason
    assert list(loaded.members) == list(result.members)
    xr.testing.assert_equal(loaded.plausibility, result.plausibility)
    assert f"Model chosen: {result.model}: highest PSIS-LOO elpd" in page
    assert 'id="model-choice"' in page
    pd.testing.assert_frame_equal(loaded.selection.table, result.selection.table,
                                  check_dtype=False)


def test_auto_leaves_out_candidates_that_cannot_take_the_request_and_refuses_options():
    table = crowd()
    binary = table[table["label"] != "cat"]
    result = pl.aggregate(binary, "auto", reliability=1.5, **FAST)
    assert result.selection.candidates == ("annotator-beta", "dawid-skene")
    assert any("reliability 1.5 is not a whole number" in note for note in result.selection.notes)
    assert any("no candidate converged" in note for note in result.selection.notes)  # 60 draws
    gold = {"q0": "ant"} if (table["task"] == "q0").any() else {}
    known = pl.aggregate(table, "auto", known=gold, **FAST)
    assert "ambiguity-dawid-skene" not in known.selection.candidates
    with pytest.raises(ValueError, match="takes no model options"):
        pl.aggregate(table, "auto", confusion_prior=(1, 1), **FAST)
    with pytest.raises(ValueError, match="name the model to warm-start"):
        pl.aggregate(table, "auto", init=result, **FAST)


def test_labels_describe_one_class_per_item():
    result = pl.aggregate(crowd(seed=3), "dirichlet", **FAST)
    labels = result.labels()
    shares = pl.metrics.label_certainty(result.trace)
    mean = pl.metrics.posterior_mean(result.trace)
    top = shares.sel(item=labels.index.values).values.argmax(axis=1)
    assert (shares["class"].values[top] == labels["top_class"].values).all()
    np.testing.assert_array_equal(shares.values.max(axis=1), labels["certainty_top1"])
    np.testing.assert_array_equal(
        mean.values[np.arange(len(labels)), top], labels["probability_top_class"])
    np.testing.assert_array_equal(result.certainty(top=1).values, labels["certainty_top1"])
    xr.testing.assert_equal(result.plausibility, mean)


def test_evaluate_predictions_and_scores():
    result = pl.aggregate(crowd(seed=4), "dirichlet", **FAST)
    labels = result.labels()
    perfect = result.evaluate(labels["top_class"])
    expected = pl.metrics.summarize(pl.metrics.ua_set_accuracy(
        result.trace, np.eye(3, dtype=bool)[pd.Index(["ant", "bee", "cat"]).get_indexer(
            labels["top_class"])]))
    assert perfect.loc["ua_accuracy", "mean"] == pytest.approx(float(expected["mean"]))
    assert perfect.loc["ua_accuracy", "mean"] == pytest.approx(labels["certainty_top1"].mean())
    scores = np.random.default_rng(0).random((len(labels), 3))
    table = result.evaluate(scores)
    assert list(table.index) == ["ua_top1_accuracy", "ua_top2_accuracy", "ua_top3_accuracy"]
    assert table.loc["ua_top3_accuracy", "mean"] == 1.0
    frame = pd.DataFrame(scores, index=labels.index, columns=["ant", "bee", "cat"]).iloc[::-1]
    pd.testing.assert_frame_equal(result.evaluate(frame), table)
    with pytest.raises(ValueError, match="no prediction for item 'q0'"):
        result.evaluate(labels["top_class"].iloc[1:])
    with pytest.raises(ValueError, match="'dog' is not one of the classes"):
        result.evaluate(labels["top_class"].replace({"ant": "dog"}))


def test_model_and_data_mismatches_are_clear_errors():
    table = crowd()
    with pytest.raises(ValueError, match="model 'prirn' takes rankings; the data are labels"):
        pl.aggregate(table, "prirn", **FAST)
    ratings = pd.DataFrame({"item": ["a", "a", "b"], "annotator": ["u", "v", "u"],
                            "score": [3.0, 4.0, 1.0]})
    with pytest.raises(ValueError, match="needs threshold="):
        pl.aggregate(ratings, **FAST)
    with pytest.raises(ValueError, match="unknown model 'nope'"):
        pl.aggregate(table, "nope")
    with pytest.raises(TypeError, match="DataFrame, Votes"):
        pl.aggregate([1, 2, 3])


@pytest.mark.parametrize("name, data, options", [
    ("dirichlet", "votes", {}),
    ("glad", "labels", {}),
    ("prirn", "rankings", {}),
    ("normal-inverse-gamma", "ratings", {"threshold": 2.0}),
])
def test_check_save_and_load_round_trip(tmp_path, name, data, options):
    table = crowd(seed=5)
    inputs = {
        "votes": pd.crosstab(table["task"], table["label"]),
        "labels": table,
        "rankings": pd.DataFrame({"item": ["a", "a", "a", "b", "b"], "annotator": list("uuvuu"),
                                  "label": ["x", "y", "y", "z", "x"], "rank": [1, 2, 1, 1, 1]}),
        "ratings": pd.DataFrame({"item": list("aabbc"), "annotator": list("uvuvu"),
                                 "score": [3.0, 4.0, 1.0, 0.5, 2.5]}),
    }
    result = pl.aggregate(inputs[data], name, **FAST, **options)
    check = result.check(draws=20)
    assert check.convergence.status in ("converged", "not converged", "exact draws")
    assert "Posterior predictive check" in check.text
    path = result.save(tmp_path / "run.nc")
    loaded = pl.load(path)
    assert loaded.model == name and type(loaded.data) is type(result.data)
    assert loaded.data.content_hash == result.data.content_hash
    pd.testing.assert_frame_equal(loaded.to_frame(), result.to_frame())
    assert [p.name for p in tmp_path.iterdir()] == ["run.nc"]
    assert result.plot() is not None


def test_a_summarised_fit_reads_its_table_from_the_summaries_and_saves_every_draw(tmp_path):
    table = crowd(seed=6)
    kept = pl.aggregate(table, "dawid-skene", **FAST, keep="draws")
    summarised = pl.aggregate(table, "dawid-skene", **FAST, keep="summary")
    assert summarised.trace.posterior.attrs["computed_when_read"] == "plausibility"
    pd.testing.assert_frame_equal(summarised.to_frame(), kept.to_frame(), rtol=1e-6)
    loaded = pl.load(summarised.save(tmp_path / "run.nc"))
    assert summarised.trace.posterior.attrs["computed_when_read"] == "plausibility"  # unchanged
    assert loaded.trace.posterior.attrs["computed_when_read"] == ""  # every draw written
    np.testing.assert_allclose(loaded.trace.posterior["plausibility"].values,
                               kept.trace.posterior["plausibility"].values, rtol=1e-6)
    np.testing.assert_array_equal(loaded.trace.log_likelihood["labels"].values,
                                  kept.trace.log_likelihood["labels"].values)
    pd.testing.assert_frame_equal(loaded.to_frame(), kept.to_frame(), rtol=1e-6)


def test_a_warm_start_after_new_labels_agrees_with_a_cold_run_within_mcse():
    sim = pl.data.simulate_glad(400, 30, n_classes=3, coverage=0.2, seed=3)
    frame = sim.labels.to_frame()
    held = np.random.default_rng(0).random(len(frame)) < 0.02
    earlier = pl.aggregate(frame[~held], "dawid-skene", seed=0, keep="draws")
    warm = pl.aggregate(frame, "dawid-skene", seed=1, init=earlier, keep="draws")
    cold = pl.aggregate(frame, "dawid-skene", seed=2, keep="draws")
    assert warm.trace.posterior.attrs["tune"] == 10
    final = earlier.trace.sample_stats["final_class"]
    assert final.dims == ("chain", "item") and final.sizes["item"] == len(set(frame[~held]["item"]))
    for name in ("class_prior", "plausibility"):
        a, b = (run.trace.posterior[name].transpose("chain", "draw", ...).values
                for run in (warm, cold))
        mcse = np.hypot(pl.diagnostics.mcse_mean(a), pl.diagnostics.mcse_mean(b))
        moving = mcse > 1e-4
        z = np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1)))[moving] / mcse[moving]
        assert z.max() <= 4.5, (name, z.max())
    with pytest.raises(ValueError, match="this is one-coin: a warm start continues the same model"):
        pl.aggregate(frame, "one-coin", init=earlier)
    with pytest.raises(ValueError, match="init= .* needs a model whose compiled sampler resumes"):
        pl.aggregate(frame, "glad", init=pl.Aggregation(earlier.trace, "glad", earlier.data))


def test_save_refuses_nothing_partial(tmp_path):
    result = pl.aggregate(crowd(), "dirichlet", **FAST)
    result.save(tmp_path / "new-folder" / "run.nc")  # the folder is made; no temporary left
    assert [p.name for p in (tmp_path / "new-folder").iterdir()] == ["run.nc"]
    with pytest.raises(ValueError, match="not a saved plausible aggregation"):
        xr.DataTree.from_dict({"posterior": xr.Dataset()}).to_netcdf(tmp_path / "other.nc")
        pl.load(tmp_path / "other.nc")


def test_shards_of_independent_items_in_a_store_are_the_sharded_runners_draws(tmp_path):
    """``store=`` alone samples shards of items in this process (1000 draws by default: shards
    are not extended) with the draws of :func:`plausible.distributed.run_shards`; the same
    call again skips the complete shards, and the posterior says which ran."""
    import json

    votes = pl.data.Votes.from_counts(np.random.default_rng(0).multinomial(6, [0.5, 0.3, 0.2],
                                                                            size=12))
    result = pl.aggregate(votes, store=tmp_path / "a", shard_size=5, chains=2, seed=0)
    assert result.model == "dirichlet" and result.default
    assert result.trace.posterior.sizes["draw"] == 1000
    assert json.loads(result.trace.posterior.attrs["shards"]) == {
        "n_shards": 3, "skipped": [], "sampled": [0, 1, 2], "retried": []}
    pl.distributed.run_shards(votes, tmp_path / "b", model="dirichlet", shard_size=5,
                              draws=1000, chains=2, seed=0)
    np.testing.assert_array_equal(
        result.trace.posterior["plausibility"].values,
        pl.distributed.open_trace(tmp_path / "b").posterior["plausibility"].values)
    again = pl.aggregate(votes, store=tmp_path / "a", shard_size=5, chains=2, seed=0)
    assert json.loads(again.trace.posterior.attrs["shards"])["skipped"] == [0, 1, 2]
    pd.testing.assert_frame_equal(again.to_frame(), result.to_frame())
    with pytest.raises(ValueError, match="--draws auto"):
        pl.aggregate(votes, store=tmp_path / "c", draws="auto")
    with pytest.raises(ValueError, match="start afresh"):
        pl.aggregate(votes, store=tmp_path / "c", init=result)
    with pytest.raises(ValueError, match="'easy-hard' runs in one process only"):
        pl.aggregate(crowd(), "easy-hard", store=tmp_path / "c")
    assert not (tmp_path / "c").exists()
