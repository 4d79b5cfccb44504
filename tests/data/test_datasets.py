import numpy as np
import pytest

from plausible.data import (
    CIFAR10_CLASSES,
    Labels,
    Ratings,
    data_home,
    load_caries,
    load_cifar10h,
    load_dermatology,
    load_mimori2021,
    load_snow2008,
)


def test_data_home_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("PLAUSIBLE_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="set the environment variable PLAUSIBLE_DATA"):
        data_home()
    assert data_home(tmp_path) == tmp_path
    monkeypatch.setenv("PLAUSIBLE_DATA", str(tmp_path))
    assert data_home() == tmp_path
    with pytest.raises(FileNotFoundError, match="does not exist"):
        data_home(tmp_path / "nowhere")


def test_missing_file_names_the_path_and_data_set(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"CIFAR-10H: expected the file .*cifar10h-counts\.npy"):
        load_cifar10h(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"Mimori et al. 2021 \(mixed_mnist, t1_v3\)"):
        load_mimori2021("mixed_mnist", "t1_v3", data_home=tmp_path)
    with pytest.raises(ValueError, match="unknown Snow et al. 2008 task 'colour'"):
        load_snow2008("colour", data_home=tmp_path)


@pytest.mark.data
def test_cifar10h(data_home):
    votes = load_cifar10h(data_home)
    assert votes.counts.shape == (10000, 10)
    np.testing.assert_array_equal(votes.classes, CIFAR10_CLASSES)
    np.testing.assert_array_equal(votes.items, np.arange(10000))
    assert votes.counts.sum(axis=1).min() == 47 and votes.counts.sum(axis=1).max() == 63


@pytest.mark.data
def test_dermatology(data_home):
    derm = load_dermatology(data_home)
    rankings = derm.rankings
    assert (rankings.n_items, rankings.n_classes) == (1947, 419)
    assert rankings.classes[0] == "Abscess"
    assert 1 <= rankings.n_readers.min() and rankings.max_readers == 10
    assert np.bincount(rankings.item).max() <= 15 * 10
    assert derm.risk.shape == (419,) and set(np.unique(derm.risk)) == {0, 1, 2}
    assert derm.risk_levels == ("low", "medium", "high")
    assert rankings.to_selectors()[1] == [[[372]], [[15]]]


@pytest.mark.data
def test_caries(data_home):
    labels = load_caries(data_home)
    assert isinstance(labels, Labels)
    assert (labels.n_items, labels.n_annotators, labels.n_annotations) == (3869, 5, 5 * 3869)
    np.testing.assert_array_equal(labels.annotators, [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(labels.classes, [0, 1])
    # Espeland & Handelman pattern counts: 1880 patients with 00000, 100 with 11111.
    positives = np.bincount(labels.item, weights=labels.label, minlength=labels.n_items)
    assert (positives == 0).sum() == 1880 and (positives == 5).sum() == 100


@pytest.mark.data
@pytest.mark.parametrize(
    ("task", "n_items", "n_annotators", "classes"),
    [("rte", 800, 164, [0, 1]), ("temp", 462, 76, [1, 2]), ("wsd", 177, 34, [1, 2, 3])],
)
def test_snow2008_labels(data_home, task, n_items, n_annotators, classes):
    snow = load_snow2008(task, data_home)
    assert isinstance(snow.annotations, Labels)
    assert (snow.annotations.n_items, snow.annotations.n_annotators) == (n_items, n_annotators)
    assert snow.annotations.n_annotations == 10 * n_items
    np.testing.assert_array_equal(snow.annotations.classes, classes)
    assert list(snow.gold.index) == list(snow.annotations.items)
    assert snow.gold.isin(classes).all()


@pytest.mark.data
@pytest.mark.parametrize("task", ["anger", "disgust", "fear", "joy", "sadness", "surprise", "valence"])
def test_snow2008_ratings(data_home, task):
    snow = load_snow2008(task, data_home)
    assert isinstance(snow.annotations, Ratings)
    assert (snow.annotations.n_items, snow.annotations.n_ratings) == (100, 1000)
    np.testing.assert_array_equal(snow.annotations.per_item().count, 10)
    assert snow.annotations.scale == ((-100.0, 100.0) if task == "valence" else (0.0, 100.0))
    assert len(snow.gold) == 100


@pytest.mark.data
@pytest.mark.parametrize(
    ("dataset", "variant", "n_items", "partitions"),
    [
        ("mixed_cifar10", "t1_v2", 45000, {"train": (30000, 1), "valid": (7500, 2), "test": (7500, 10)}),
        ("mixed_mnist", "t1_v5", 52500, {"train": (37500, 1), "valid": (7500, 5), "test": (7500, 10)}),
        ("mixed_cifar10", "test_split.n1_s1.rem", 7500, {"test": (7500, 9)}),
        ("mixed_mnist", "test_split.n1_s1.sam", 7500, {"test": (7500, 1)}),
    ],
)
def test_mimori2021(data_home, dataset, variant, n_items, partitions):
    mimori = load_mimori2021(dataset, variant, data_home=data_home)
    assert mimori.votes.counts.shape == (n_items, 10)
    assert list(mimori.meta.columns) == ["id", "nrater", "_mixed", "_org_y", "_org_id", "_ratio", "partition"]
    np.testing.assert_array_equal(mimori.votes.items, mimori.meta["id"])
    np.testing.assert_array_equal(mimori.votes.counts.sum(axis=1), mimori.meta["nrater"])
    for partition, (size, votes) in partitions.items():
        rows = (mimori.meta["partition"] == partition).to_numpy()
        assert rows.sum() == size
        assert (mimori.votes.counts[rows].sum(axis=1) == votes).all()
