"""Annotation tools' exports: each reader gives the container that the same labels as a long
CSV give, leaves out (with a warning) what the tool marks as not an annotation, and refuses
what it cannot read with one line naming the file and the task."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from plausible.cli import main
from plausible.data import read_export, read_label_studio, read_mturk, read_prodigy
from plausible.data import read_sagemaker, read_toloka
from plausible.data.rankings import Rankings
from plausible.data.ratings import Ratings
from plausible.data.tables import read_annotations

EXPORTS = Path(__file__).parent / "exports"

CASES = [  # fixture, tool, what the tool leaves out
    ("label_studio.json", "label-studio", "1 cancelled annotations"),
    ("label_studio_min.json", "label-studio", None),
    ("mturk_batch_results.csv", "mturk", "1 assignments of another status"),
    ("toloka_results.tsv", "toloka", "1 assignments of another status"),
    ("prodigy.jsonl", "prodigy", "1 ignored answers"),
    ("sagemaker_job", "sagemaker", "1 answers replaced by a later iteration's"),
]


def long_csv(fixture: str):
    name = "label_studio" if fixture.startswith("label_studio") else fixture.rsplit(".", 1)[0]
    return EXPORTS / f"{name}.long.csv"


def triples(labels):
    return sorted(zip(labels.items[labels.item].tolist(),
                      labels.annotators[labels.annotator].tolist(),
                      labels.classes[labels.label].tolist()))


@pytest.mark.parametrize("fixture, tool, left_out", CASES)
def test_each_export_reads_as_its_long_table(fixture, tool, left_out, recwarn):
    labels = read_export(tool, EXPORTS / fixture)
    said = [str(w.message) for w in recwarn]
    if left_out is None:
        assert not said
    else:
        assert len(said) == 1 and left_out in said[0] and fixture in said[0]
    expected = read_annotations(long_csv(fixture))
    assert triples(labels) == triples(expected)
    assert sorted(labels.classes.tolist()) == sorted(expected.classes.tolist())


@pytest.mark.parametrize("fixture, tool", [(c[0], c[1]) for c in CASES])
def test_the_command_line_reads_an_export_as_its_long_table(fixture, tool, tmp_path, capsys):
    run = ["--model", "dawid-skene", "--draws", "100", "--chains", "2", "--seed", "3",
           "--no-progress"]
    assert main(["aggregate", str(EXPORTS / fixture), "--format", tool, *run, "-o",
                 str(tmp_path / "a.csv")]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "not read" in line]
    left_out = next(c[2] for c in CASES if c[0] == fixture)
    if left_out is not None:  # one line, as the command line says things
        assert said == [f"plausible: warning: {EXPORTS / fixture}: not read, as not "
                        f"annotations: {left_out}"]
    assert main(["aggregate", str(long_csv(fixture)), *run, "-o", str(tmp_path / "b.csv")]) == 0
    a, b = (pd.read_csv(tmp_path / f"{x}.csv").set_index("item").sort_index() for x in "ab")
    pd.testing.assert_frame_equal(a, b)


def test_a_label_studio_ranker_reads_as_rankings_with_unranked_candidates(tmp_path):
    rankings = read_label_studio(EXPORTS / "label_studio_ranker.json")
    expected = read_annotations(EXPORTS / "label_studio_ranker.long.csv")
    assert isinstance(rankings, Rankings)
    assert rankings.to_selectors() == expected.to_selectors()
    assert rankings.classes.tolist() == expected.classes.tolist() == ["a", "b", "c"]
    tasks = json.loads((EXPORTS / "label_studio_ranker.json").read_text())
    minimal = [{"prompt": t["data"]["prompt"], "id": t["id"], "annotator": a["completed_by"],
                "annotation_id": a["id"], "rank": [a["result"][0]["value"]]}
               for t in tasks for a in t["annotations"][::-1]]  # JSON-MIN: newest first
    (tmp_path / "min.json").write_text(json.dumps(minimal))
    assert read_label_studio(tmp_path / "min.json").to_selectors() == rankings.to_selectors()
    tasks[1]["annotations"][1]["result"][0]["value"]["ranker"] = {"good": ["c"],
                                                                  "bad": ["a", "b"]}
    (tmp_path / "buckets.json").write_text(json.dumps(tasks))
    with pytest.raises(ValueError, match=r"task 8, annotator 2: a ranking in 2 buckets"):
        read_label_studio(tmp_path / "buckets.json")


def test_label_studio_ratings_and_what_it_refuses(tmp_path):
    tasks = json.loads((EXPORTS / "label_studio.json").read_text())
    for task in tasks:
        for k, annotation in enumerate(task["annotations"]):
            annotation["result"] = [] if annotation["was_cancelled"] else [
                {"from_name": "quality", "to_name": "text", "type": "rating",
                 "value": {"rating": 1 + (task["id"] + k) % 5}}]
    path = tmp_path / "rated.json"
    path.write_text(json.dumps(tasks))
    with pytest.warns(UserWarning, match="1 cancelled"):
        ratings = read_label_studio(path)
    assert isinstance(ratings, Ratings) and ratings.score.size == 6
    records = json.loads((EXPORTS / "label_studio_min.json").read_text())
    records[0]["sentiment"] = {"choices": ["Neutral", "Positive"]}  # a multiple-choice tag
    path.write_text(json.dumps(records))
    with pytest.raises(ValueError, match=r"rated.json: task 11, annotator 7: 2 choices"):
        read_label_studio(path)
    del tasks[0]["annotations"][0]["completed_by"]
    path.write_text(json.dumps(tasks))
    with pytest.raises(ValueError, match="task 11: an annotation without 'completed_by'"):
        read_label_studio(path)
    for task in tasks:  # a pairwise tag: no container for comparisons of items
        for annotation in task["annotations"]:
            annotation["result"] = [{"from_name": "better", "type": "pairwise",
                                     "value": {"selected": "left"}}]
    path.write_text(json.dumps(tasks))
    with pytest.raises(ValueError, match=r"tag types \['pairwise'\]; a Choices"):
        read_label_studio(path)
    both = json.loads((EXPORTS / "label_studio.json").read_text())
    both[0]["annotations"][0]["result"].append(
        {"from_name": "topic", "type": "choices", "value": {"choices": ["shipping"]}})
    path.write_text(json.dumps(both))
    with pytest.warns(UserWarning):
        with pytest.raises(ValueError, match=r"results for 2 tags \(\['sentiment', 'topic'\]\)"):
            read_label_studio(path)
        assert read_label_studio(path, control="topic").classes.tolist() == ["shipping"]


def test_mturk_answer_shapes_and_refusals(tmp_path):
    frame = pd.read_csv(EXPORTS / "mturk_batch_results.csv", dtype=str)
    answers = frame.pop("Answer.sentiment.label")
    task_answers = frame.assign(**{"Answer.taskAnswers": [
        json.dumps([{"sentiment": {"label": a}}]) for a in answers]})
    task_answers.to_csv(tmp_path / "json.csv", index=False)
    radio = frame.assign(**{f"Answer.sentiment.{o}": (answers == o).map(str).str.lower()
                            for o in ("Positive", "Negative", "Neutral")})
    radio.to_csv(tmp_path / "radio.csv", index=False)
    expected = triples(read_annotations(EXPORTS / "mturk_batch_results.long.csv"))
    for name in ("json.csv", "radio.csv"):
        with pytest.warns(UserWarning, match="1 assignments of another status"):
            assert triples(read_mturk(tmp_path / name)) == expected
    radio.assign(**{"Answer.other": "x"}).to_csv(tmp_path / "two.csv", index=False)
    with pytest.warns(UserWarning):
        with pytest.raises(ValueError, match="several answer fields"):
            read_mturk(tmp_path / "two.csv")
        assert triples(read_mturk(tmp_path / "two.csv", answer="sentiment")) == expected
    radio.loc[0, "Answer.sentiment.Neutral"] = "true"
    radio.to_csv(tmp_path / "both.csv", index=False)
    with pytest.raises(ValueError, match="HIT '3H1ZQ', worker 'A2ALEX': several options"):
        read_mturk(tmp_path / "both.csv")
    frame.drop(columns="WorkerId").to_csv(tmp_path / "nobody.csv", index=False)
    with pytest.raises(ValueError, match="no WorkerId column"):
        read_mturk(tmp_path / "nobody.csv")


def test_toloka_prodigy_and_sagemaker_refusals(tmp_path):
    table = pd.read_csv(EXPORTS / "toloka_results.tsv", sep="\t", dtype=str)
    table.assign(**{"OUTPUT:topic": "x"}).to_csv(tmp_path / "two.tsv", sep="\t", index=False)
    with pytest.raises(ValueError, match="2 OUTPUT: columns"):
        read_toloka(tmp_path / "two.tsv")
    table.drop(columns="ASSIGNMENT:task_id").to_csv(tmp_path / "inputs.tsv", sep="\t",
                                                    index=False)
    with pytest.warns(UserWarning):
        by_input = read_toloka(tmp_path / "inputs.tsv")  # the tasks named by their INPUT:
    assert sorted(by_input.items.tolist()) == ["great service", "it arrived", "slow delivery"]
    lines = (EXPORTS / "prodigy.jsonl").read_text().splitlines()
    task = json.loads(lines[0])
    for key, value, message in [("_annotator_id", None, "line 1: no _annotator_id"),
                                ("accept", ["POS", "NEU"], "line 1: 2 options accepted")]:
        broken = dict(task, **{key: value})
        if value is None:
            broken.pop("_session_id")
        (tmp_path / "p.jsonl").write_text("\n".join([json.dumps(broken), *lines[1:]]))
        with pytest.raises(ValueError, match=message):
            read_prodigy(tmp_path / "p.jsonl")
    binary = [dict(task, label="POS", answer=a, _annotator_id=w) for a, w in
              (("accept", "a"), ("reject", "b"))]
    for t in binary:
        t.pop("options")
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps(t) for t in binary))
    assert triples(read_prodigy(tmp_path / "b.jsonl")) == [("-101|POS", "a", "accept"),
                                                           ("-101|POS", "b", "reject")]
    (tmp_path / "mixed.jsonl").write_text("\n".join([lines[0], json.dumps(binary[0])]))
    with pytest.raises(ValueError, match="line 2: the file mixes choice and classification"):
        read_prodigy(tmp_path / "mixed.jsonl")
    job = tmp_path / "job"
    shutil.copytree(EXPORTS / "sagemaker_job", job)
    (job / "manifests" / "output" / "output.manifest").unlink()  # objects named by number
    with pytest.warns(UserWarning):
        assert sorted(set(read_sagemaker(job).items.tolist())) == [0, 1, 2]
    response = next((job / "annotations").rglob("*.json"))
    content = json.loads(response.read_text())
    content["answers"][0]["answerContent"] = {"crowd-classifier-multi-select":
                                              {"labels": ["Positive", "Neutral"]}}
    response.write_text(json.dumps(content))
    with pytest.raises(ValueError, match="answered a multi-select"):
        read_sagemaker(job)
    with pytest.raises(ValueError, match="no worker responses"):
        read_sagemaker(tmp_path)
    with pytest.raises(ValueError, match="only the consolidated label"):
        read_sagemaker(EXPORTS / "sagemaker_job" / "manifests" / "output" / "output.manifest")


def test_bad_exports_exit_2_with_one_line(tmp_path, capsys):
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    for tool, path, words in [("mturk", tmp_path / "x.csv", "no HITId, WorkerId column"),
                              ("prodigy", EXPORTS / "label_studio.json", "line 1: not"),
                              ("sagemaker", tmp_path, "no worker responses"),
                              ("label-studio", EXPORTS / "mturk_batch_results.csv", "JSON")]:
        assert main(["aggregate", str(path), "--format", tool, "-o",
                     str(tmp_path / "o.csv")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err and str(path) in err, err
    assert main(["aggregate", str(EXPORTS / "prodigy.jsonl"), "--format", "prodigy",
                 "--label", "x", "-o", str(tmp_path / "o.csv")]) == 2
    assert "has one answer field" in capsys.readouterr().err
    np.testing.assert_equal(read_export("toloka", EXPORTS / "toloka_results.tsv",
                                        "sentiment").n_classes, 3)
