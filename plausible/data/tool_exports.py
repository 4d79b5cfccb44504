"""Exports of annotation tools read as annotation containers, with the tools' own ids and
class names kept.

Each reader turns one tool's export into the long table of :mod:`plausible.data.tables`
(item, annotator, label; or a numeric score) and reads it with
:func:`~plausible.data.tables.from_frame`, so the container is the one the equivalent long
CSV gives. What the tool marks as not an annotation (a cancelled or skipped task, a
submission with nothing chosen) is left out and counted in a warning; a shape the reader
does not take (several choices ticked where one class is expected, an annotation without
its annotator) is refused with a ``ValueError`` naming the file and the task.

* :func:`read_label_studio` — Label Studio's JSON export (a list of tasks, each with its
  ``annotations``, each with ``completed_by`` and a ``result`` list) and its JSON-MIN
  export (one flat record per annotation: the task's ``id``, ``annotator`` and one key per
  control tag), for a ``Choices`` tag (-> :class:`~plausible.data.labels.Labels`), a
  ``Rating`` tag (-> :class:`~plausible.data.ratings.Ratings`) or a ``Ranker`` tag
  (-> :class:`~plausible.data.rankings.Rankings`: each annotator's order of a task's
  candidates);
* :func:`read_mturk` — an Amazon Mechanical Turk batch results CSV (one row per assignment:
  ``HITId``, ``WorkerId``, ``AssignmentStatus``, ``Input.*`` and ``Answer.*`` columns);
* :func:`read_toloka` — a Toloka pool's results TSV (``INPUT:``, ``OUTPUT:``, ``GOLDEN:``
  and ``ASSIGNMENT:`` columns);
* :func:`read_prodigy` — Prodigy's ``db-out`` JSONL (one line per annotator and task:
  ``_input_hash``, ``_annotator_id``/``_session_id``, ``answer``; the ``choice`` interface's
  ``options`` and ``accept``, or the binary interface's ``label``);
* :func:`read_sagemaker` — SageMaker Ground Truth's per-worker responses
  (``annotations/worker-response/iteration-N/<object>/<time>.json``, each with its
  ``answers``), the objects named from ``manifests/output/output.manifest`` when it is there.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd

from plausible.data.tables import from_frame, read_table

KINDS = ("choices", "rating", "ranker")
"""The Label Studio tag types read: ``Choices`` (labels), ``Rating`` (ratings), ``Ranker``
(rankings)."""

JSON_MIN_META = ("id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time",
                 "agreement")
"""The keys of a Label Studio JSON-MIN record that are not the task's data or a control
tag's result."""


def _load_json(path: Path):
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: cannot be read as JSON: {error}") from None


def _left_out(path: Path, counts: dict[str, int]) -> None:
    """A warning counting what an export holds that is not an annotation."""
    said = [f"{n} {what}" for what, n in counts.items() if n]
    if said:
        warnings.warn(f"{path}: not read, as not annotations: {', '.join(said)}", stacklevel=3)


def read_label_studio(path, *, control: str | None = None):
    """The annotations of a Label Studio export (JSON or JSON-MIN, recognised from its
    records) for the control tag ``control`` (its ``from_name``; needed only when the
    export has several): a ``Choices`` tag gives :class:`~plausible.data.labels.Labels`
    (item = the task's ``id``, annotator = ``completed_by``'s id, or its e-mail where the
    export expanded the user, as JSON-MIN names it; label = the choice), a ``Rating`` tag
    :class:`~plausible.data.ratings.Ratings`, a ``Ranker`` tag
    :class:`~plausible.data.rankings.Rankings` (the task's candidates, by their ``id``, in
    the annotator's order; candidates left in the ``"_"`` column unranked).

    Cancelled (skipped) annotations, annotations with no result for the tag and (JSON-MIN)
    tasks without annotations are left out, counted in a warning. Several choices in one
    annotation (a multiple-choice tag) are refused: they are a set of labels, not a class."""
    path = Path(path)
    content = _load_json(path)
    if not isinstance(content, list) or not content or not all(isinstance(r, dict)
                                                               for r in content):
        raise ValueError(f"{path}: a Label Studio export is a non-empty list of tasks (JSON) "
                         "or of annotation records (JSON-MIN)")
    if all("annotations" in task for task in content):
        rows, kind, counts = _label_studio_tasks(path, content, control)
    elif all("annotator" in record for record in content):
        rows, kind, counts = _label_studio_min(path, content, control)
    else:
        raise ValueError(f"{path}: neither a Label Studio JSON export (tasks with "
                         "'annotations') nor a JSON-MIN one (records with 'annotator')")
    _left_out(path, counts)
    if not rows:
        raise ValueError(f"{path}: no annotation holds a result for the tag")
    if kind == "ranker":  # one row per ranked candidate, its place the rank
        frame = pd.DataFrame([(item, who, candidate, place) for item, who, order in rows
                              for place, candidate in enumerate(order, start=1)],
                             columns=["item", "annotator", "label", "rank"])
        return from_frame(frame, format="rankings", source=str(path))
    value = "label" if kind == "choices" else "score"
    frame = pd.DataFrame(rows, columns=["item", "annotator", value])
    return from_frame(frame, format="labels" if kind == "choices" else "ratings",
                      source=str(path))


def _pick_control(path: Path, seen: dict[str, str], control: str | None) -> str:
    """The control tag to read: ``control``, or the only one ``seen`` (name -> kind)."""
    if control is not None:
        if control not in seen:
            raise ValueError(f"{path}: no results for the tag {control!r} (tags: "
                             f"{sorted(seen) or 'none'})")
        return control
    if len(seen) != 1:
        raise ValueError(f"{path}: results for {len(seen)} tags ({sorted(seen)}): name the one "
                         "to read (control=, or --label on the command line)")
    return next(iter(seen))


def _label_studio_tasks(path: Path, tasks: list, control: str | None):
    """``(rows, kind, counts)`` of a JSON export."""
    seen: dict[str, str] = {}
    other: set[str] = set()
    for task in tasks:
        for annotation in task.get("annotations") or []:
            for result in annotation.get("result") or []:
                if result.get("type") in KINDS:
                    seen.setdefault(result.get("from_name"), result["type"])
                else:
                    other.add(str(result.get("type")))
    if not seen and other:
        raise ValueError(f"{path}: its results are of the tag types {sorted(other)}; a "
                         "Choices (labels), Rating (ratings) or Ranker (rankings) tag is "
                         "read")
    name = _pick_control(path, seen, control)
    kind = seen[name]
    rows, counts = [], {"cancelled annotations": 0, "annotations without a result": 0}
    for task in tasks:
        if "id" not in task:
            raise ValueError(f"{path}: a task without an 'id'")
        for annotation in task.get("annotations") or []:
            if annotation.get("was_cancelled") or annotation.get("skipped"):
                counts["cancelled annotations"] += 1
                continue
            who = annotation.get("completed_by")
            if isinstance(who, dict):
                who = who.get("email") or who.get("id")
            if who is None:
                raise ValueError(f"{path}: task {task['id']!r}: an annotation without "
                                 "'completed_by' (its annotator)")
            values = [r["value"] for r in annotation.get("result") or []
                      if r.get("from_name") == name]
            if not values:
                counts["annotations without a result"] += 1
                continue
            rows.append((task["id"], who, _one_value(path, task["id"], who, kind,
                                                     values[0])))
    return rows, kind, counts


def _one_value(path, item, who, kind: str, value: dict):
    """A result's class (``choices``: exactly one), rating, or (``ranker``) the candidates'
    ids in order: the list, or the one column of the dictionary (the tag's name; a
    ``"_"`` column holds the candidates left unranked); several bucket columns are
    categories, not an order, and refused."""
    if kind == "rating":
        return value["rating"]
    if kind == "ranker":
        ranker = value["ranker"]
        if isinstance(ranker, dict):
            columns = [v for k, v in ranker.items() if k != "_"]
            if len(columns) != 1:
                buckets = sorted(k for k in ranker if k != "_")
                raise ValueError(f"{path}: task {item!r}, annotator {who!r}: a ranking in "
                                 f"{len(columns)} buckets ({buckets}); buckets are "
                                 "categories, not an order: one ranked list is read")
            ranker = columns[0]
        return [str(candidate) for candidate in ranker]
    choices = value.get("choices") or []
    if len(choices) != 1:
        raise ValueError(f"{path}: task {item!r}, annotator {who!r}: {len(choices)} choices; "
                         "one class per annotation is read (a multiple-choice tag gives a "
                         "set of labels)")
    return choices[0]


def _label_studio_min(path: Path, records: list, control: str | None):
    """``(rows, kind, counts)`` of a JSON-MIN export: a tag's result is a string (one
    choice), ``{"choices": [...]}`` (several), ``[{"rating": r}]`` or ``[{"ranker": ...}]``."""
    def kind_of(value):
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return next((k for k in ("rating", "ranker") if k in value[0]), None)
        if isinstance(value, (str, dict)):
            return "choices"
        return None

    seen: dict[str, str] = {}
    values_of: dict[tuple, set] = {}
    for record in records:
        for key, value in record.items():
            if key in JSON_MIN_META:
                continue
            if isinstance(value, (list, dict)) and kind_of(value):
                seen.setdefault(key, kind_of(value))
            elif isinstance(value, str):
                values_of.setdefault((key, record.get("id")), set()).add(value)
    # a task's data fields are the same in each of its records; a tag's answers may differ
    for (key, _), values in values_of.items():
        if len(values) > 1:
            seen.setdefault(key, "choices")
    if control is None and not seen:
        raise ValueError(f"{path}: a JSON-MIN export names its tags like its data fields and "
                         "no task's answers differ here: name the tag to read (control=, or "
                         "--label on the command line)")
    if control is not None and control not in seen:
        seen[control] = "choices"
    name = _pick_control(path, seen, control)
    kind = seen[name]
    rows, counts = [], {"tasks without annotations": 0, "annotations without a result": 0}
    first = {}  # Label Studio lists a task's records newest first: read them as created
    for number, record in enumerate(records):
        first.setdefault(record.get("id"), number)
    records = sorted(records, key=lambda r: (first[r.get("id")], r.get("annotation_id") or 0))
    for record in records:
        if record.get("annotator") is None:
            counts["tasks without annotations"] += 1
            continue
        if name not in record:
            counts["annotations without a result"] += 1
            continue
        value = record[name]
        if kind in ("rating", "ranker"):
            value = value[0]
        elif isinstance(value, str):
            value = {"choices": [value]}
        rows.append((record["id"], record["annotator"],
                     _one_value(path, record["id"], record["annotator"], kind, value)))
    return rows, kind, counts


MTURK_KEPT = ("Submitted", "Approved")
"""The assignment statuses whose answers :func:`read_mturk` reads (a rejected assignment is
work the requester did not trust)."""


def _text(column: pd.Series) -> pd.Series:
    """A column as stripped strings, missing values as empty strings."""
    return column.astype("string").fillna("").str.strip()


def read_mturk(path, *, answer: str | None = None, statuses=MTURK_KEPT):
    """The labels of a Mechanical Turk batch results CSV: item = ``HITId``, annotator =
    ``WorkerId``, label = the answer, from

    * the answer column ``answer`` (``Answer.<answer>``, or the column's full name), or the
      only ``Answer.*`` column (e.g. ``Answer.category.label``, a ``crowd-classifier``'s
      flattened output);
    * ``Answer.taskAnswers`` (a form without ``flatten-objects``): a JSON list whose first
      object holds one field, its value or that value's ``label``;
    * one ``true``/``false`` column per option, ``Answer.<name>.<option>`` (radio buttons):
      the option that is true, exactly one per row.

    Assignments whose ``AssignmentStatus`` is not in ``statuses`` (default: submitted and
    approved; not rejected), rows without a worker and empty answers are left out, counted in
    a warning. Several answer fields are refused unless ``answer`` names one."""
    path = Path(path)
    frame = read_table(path)
    missing = [c for c in ("HITId", "WorkerId") if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: not a Mechanical Turk batch results file (no "
                         f"{', '.join(missing)} column; columns {list(frame.columns)[:12]})")
    counts = {"assignments of another status": 0, "rows without a worker": 0,
              "empty answers": 0}
    if "AssignmentStatus" in frame.columns:
        kept = _text(frame["AssignmentStatus"]).isin(list(statuses))
        counts["assignments of another status"] = int((~kept).sum())
        frame = frame[kept]
    worker = _text(frame["WorkerId"])
    counts["rows without a worker"] = int((worker == "").sum())
    frame, worker = frame[worker != ""], worker[worker != ""]
    labels = _mturk_answers(path, frame, answer)
    empty = labels == ""
    counts["empty answers"] = int(empty.sum())
    _left_out(path, counts)
    long = pd.DataFrame({"item": frame["HITId"].to_numpy(), "annotator": worker.to_numpy(),
                         "label": labels.to_numpy()})[~empty.to_numpy()]
    if long.empty:
        raise ValueError(f"{path}: no answers left to read")
    return from_frame(long.reset_index(drop=True), format="labels", source=str(path))


def _mturk_answers(path: Path, frame: pd.DataFrame, answer: str | None) -> pd.Series:
    """Each row's answer as a string (see :func:`read_mturk`)."""
    columns = [c for c in frame.columns if str(c).startswith("Answer.")]
    if answer is not None:
        name = answer if answer in frame.columns else f"Answer.{answer}"
        groups = [c for c in columns if c.startswith(f"{name}.")]
        if name in frame.columns:
            columns = [name]
        elif groups:
            columns = groups
        else:
            raise ValueError(f"{path}: no answer column {name!r} (answer columns: {columns})")
    if not columns:
        raise ValueError(f"{path}: no Answer.* column")
    if columns == ["Answer.taskAnswers"]:
        return frame["Answer.taskAnswers"].map(lambda text: _task_answer(path, text))
    if len(columns) == 1:
        return _text(frame[columns[0]])
    prefixes = {c.rsplit(".", 1)[0] for c in columns}
    flags = frame[columns].astype("string").apply(lambda c: c.str.strip().str.lower())
    if len(prefixes) == 1 and flags.isin(["true", "false", ""]).all().all():
        chosen = flags == "true"
        several = chosen.sum(axis=1) > 1
        if several.any():
            row = frame[several.to_numpy()].iloc[0]
            raise ValueError(f"{path}: HIT {row['HITId']!r}, worker {row['WorkerId']!r}: "
                             "several options are true; one class per answer is read")
        options = pd.Series([c.rsplit(".", 1)[1] for c in columns], index=columns)
        return chosen.apply(lambda r: options[r.to_numpy()].iloc[0] if r.any() else "",
                            axis=1)
    raise ValueError(f"{path}: several answer fields ({columns}): name the one to read "
                     "(answer=, or --label on the command line)")


def _task_answer(path: Path, text) -> str:
    """The class of an ``Answer.taskAnswers`` cell (see :func:`read_mturk`)."""
    if text is None or pd.isna(text) or not str(text).strip():
        return ""
    try:
        first = json.loads(text)[0]
        [value] = first.values()
    except (json.JSONDecodeError, IndexError, KeyError, TypeError, ValueError, AttributeError):
        raise ValueError(f"{path}: Answer.taskAnswers {str(text)[:60]!r} is not a JSON list "
                         "of one answer field") from None
    if isinstance(value, dict):
        value = value.get("label", "")
    return str(value)


TOLOKA_KEPT = ("SUBMITTED", "APPROVED", "ACCEPTED")
"""The assignment statuses whose answers :func:`read_toloka` reads."""


def read_toloka(path, *, output: str | None = None, statuses=TOLOKA_KEPT):
    """The labels of a Toloka pool's results TSV: item = ``ASSIGNMENT:task_id`` (or, where
    the download left it out, the task's ``INPUT:`` values, joined with `` | `` when there
    are several), annotator = ``ASSIGNMENT:worker_id``, label = ``OUTPUT:<output>`` (the only
    ``OUTPUT:`` column by default).

    Assignments whose ``ASSIGNMENT:status`` is not in ``statuses`` (default: submitted and
    approved; not rejected, skipped or expired) and empty outputs are left out, counted in a
    warning. Control tasks (a ``GOLDEN:`` answer) are read like the others: the workers'
    answers on them are labels too."""
    path = Path(path)
    frame = read_table(path)
    if "ASSIGNMENT:worker_id" not in frame.columns:
        raise ValueError(f"{path}: not a Toloka results file (no ASSIGNMENT:worker_id column; "
                         f"columns {list(frame.columns)[:12]})")
    outputs = [c for c in frame.columns if str(c).startswith("OUTPUT:")]
    if output is not None:
        name = output if output in frame.columns else f"OUTPUT:{output}"
        if name not in frame.columns:
            raise ValueError(f"{path}: no output column {name!r} (outputs: {outputs})")
        outputs = [name]
    if len(outputs) != 1:
        raise ValueError(f"{path}: {len(outputs)} OUTPUT: columns ({outputs}): name the one "
                         "to read (output=, or --label on the command line)")
    counts = {"assignments of another status": 0, "empty outputs": 0}
    if "ASSIGNMENT:status" in frame.columns:
        kept = _text(frame["ASSIGNMENT:status"]).str.upper().isin(list(statuses))
        counts["assignments of another status"] = int((~kept).sum())
        frame = frame[kept]
    if "ASSIGNMENT:task_id" in frame.columns:
        item = frame["ASSIGNMENT:task_id"]
    else:
        inputs = [c for c in frame.columns if str(c).startswith("INPUT:")]
        if not inputs:
            raise ValueError(f"{path}: no ASSIGNMENT:task_id and no INPUT: columns to tell "
                             "the tasks apart")
        item = _text(frame[inputs[0]])
        for column in inputs[1:]:
            item = item + " | " + _text(frame[column])
    label = _text(frame[outputs[0]])
    empty = (label == "").to_numpy()
    counts["empty outputs"] = int(empty.sum())
    _left_out(path, counts)
    worker = _text(frame["ASSIGNMENT:worker_id"])
    if (worker[~empty] == "").any():
        raise ValueError(f"{path}: an assignment without ASSIGNMENT:worker_id")
    long = pd.DataFrame({"item": item.to_numpy(), "annotator": worker.to_numpy(),
                         "label": label.to_numpy()})[~empty]
    if long.empty:
        raise ValueError(f"{path}: no answers left to read")
    return from_frame(long.reset_index(drop=True), format="labels", source=str(path))


def read_prodigy(path):
    """The labels of a Prodigy ``db-out`` JSONL file: item = ``_input_hash``, annotator =
    ``_annotator_id`` (else ``_session_id``), label = the text of the one accepted option of
    a ``choice`` task, or, for binary ``classification`` tasks (a ``label`` and an
    ``answer``), item = ``<_input_hash>|<label>`` and label = ``accept`` or ``reject``.

    ``ignore`` answers and choice tasks with no option accepted (or rejected) are left out,
    counted in a warning; several accepted options are refused (a set of labels), as is a
    file that mixes the two kinds of task. Repeated answers of one annotator on one task are
    all kept (replicated annotations)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    rows, kinds = [], set()
    counts = {"ignored answers": 0, "choice tasks with no option accepted": 0}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}, line {number}: not JSON: {error}") from None
        where = f"{path}, line {number}"
        if "_input_hash" not in task or "answer" not in task:
            raise ValueError(f"{where}: not a Prodigy annotation (no _input_hash or answer)")
        who = task.get("_annotator_id") or task.get("_session_id")
        if who is None:
            raise ValueError(f"{where}: no _annotator_id or _session_id (its annotator)")
        if task["answer"] == "ignore":
            counts["ignored answers"] += 1
            continue
        if "options" in task:
            kinds.add("choice")
            accepted = task.get("accept") or []
            if task["answer"] != "accept" or not accepted:
                counts["choice tasks with no option accepted"] += 1
                continue
            if len(accepted) > 1:
                raise ValueError(f"{where}: {len(accepted)} options accepted; one class per "
                                 "answer is read (a multiple choice gives a set of labels)")
            text = {option["id"]: option.get("text", option["id"])
                    for option in task["options"]}
            if accepted[0] not in text:
                raise ValueError(f"{where}: accepted option {accepted[0]!r} is not among its "
                                 "options")
            rows.append((task["_input_hash"], who, text[accepted[0]]))
        elif "label" in task:
            kinds.add("classification")
            rows.append((f"{task['_input_hash']}|{task['label']}", who, task["answer"]))
        else:
            raise ValueError(f"{where}: neither a choice task (options) nor a classification "
                             "task (label)")
        if len(kinds) > 1:
            raise ValueError(f"{where}: the file mixes choice and classification tasks; "
                             "export each dataset on its own")
    _left_out(path, counts)
    if not rows:
        raise ValueError(f"{path}: no answers left to read")
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    return from_frame(frame, format="labels", source=str(path))


def read_sagemaker(path):
    """The labels of a SageMaker Ground Truth labelling job's per-worker responses: ``path``
    is the job's output folder (or its ``annotations/worker-response`` folder); every
    ``iteration-N/<object>/<time>.json`` file holds ``answers``, each with a ``workerId`` and
    an ``answerContent`` of one template element whose ``label`` is the class (the
    ``crowd-classifier`` and ``crowd-image-classifier`` templates). Item = the object's
    ``source-ref`` (or ``source``) from ``manifests/output/output.manifest`` beside, else
    its number. A worker's answer on an object sent again in a later iteration replaces the
    earlier one (counted in a warning); a multi-select answer (``labels``) is refused."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such folder")
    if path.is_file():
        raise ValueError(f"{path}: a file; give the labelling job's output folder (its "
                         "annotations/worker-response hold each worker's answers; an output "
                         "manifest holds only the consolidated label)")
    responses = path if path.name == "worker-response" else path / "annotations" / \
        "worker-response"
    files = sorted(responses.glob("iteration-*/*/*.json"),
                   key=lambda f: (int(f.parts[-3].split("-")[-1]), f.parts[-2], f.name))
    if not files:
        raise ValueError(f"{path}: no worker responses (iteration-N/<object>/<time>.json "
                         f"under {responses})")
    answers: dict[tuple, str] = {}
    counts = {"answers replaced by a later iteration's": 0}
    for file in files:
        try:
            content = json.loads(file.read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"{file}: not JSON: {error}") from None
        obj = int(file.parts[-2]) if file.parts[-2].isdigit() else file.parts[-2]
        for answer in content.get("answers", []):
            worker = answer.get("workerId")
            if not worker:
                raise ValueError(f"{file}: an answer without its workerId")
            content_of = answer.get("answerContent") or {}
            if len(content_of) != 1 or not isinstance(next(iter(content_of.values())), dict):
                raise ValueError(f"{file}: worker {worker!r}: an answerContent of "
                                 f"{len(content_of)} template elements; one is read")
            element = next(iter(content_of.values()))
            if "labels" in element:
                raise ValueError(f"{file}: worker {worker!r} answered a multi-select "
                                 "(labels); one class per answer is read")
            if "label" not in element:
                raise ValueError(f"{file}: worker {worker!r}: no label in its answerContent")
            counts["answers replaced by a later iteration's"] += (obj, worker) in answers
            answers[(obj, worker)] = element["label"]
    _left_out(path, counts)
    names = _manifest_sources(path)
    frame = pd.DataFrame([(names.get(obj, obj), worker, label)
                          for (obj, worker), label in answers.items()],
                         columns=["item", "annotator", "label"])
    return from_frame(frame, format="labels", source=str(path))


def _manifest_sources(path: Path) -> dict:
    """Object number -> its ``source-ref`` (or ``source``) from the job's output manifest,
    when it is there."""
    manifest = path / "manifests" / "output" / "output.manifest"
    if not manifest.exists():
        return {}
    names = {}
    for number, line in enumerate(manifest.read_text().splitlines()):
        if line.strip():
            record = json.loads(line)
            names[number] = record.get("source-ref", record.get("source", number))
    return names


READERS = {"label-studio": read_label_studio, "mturk": read_mturk, "toloka": read_toloka,
           "prodigy": read_prodigy, "sagemaker": read_sagemaker}
"""The readers by the tool's name (the command line's ``--format``)."""

FIELD_OPTIONS = {"label-studio": "control", "mturk": "answer", "toloka": "output"}
"""The option of each reader that names the field to read, where an export can hold
several."""


def read_export(tool: str, path, field: str | None = None):
    """The annotations of ``tool``'s export at ``path`` (:data:`READERS`), ``field`` naming
    the tag, answer or output field to read where the export holds several."""
    if tool not in READERS:
        raise ValueError(f"unknown annotation tool {tool!r} (known: {sorted(READERS)})")
    if field is None:
        return READERS[tool](path)
    if tool not in FIELD_OPTIONS:
        raise ValueError(f"a {tool} export has one answer field: none is named")
    return READERS[tool](path, **{FIELD_OPTIONS[tool]: field})


__all__ = ["FIELD_OPTIONS", "MTURK_KEPT", "READERS", "TOLOKA_KEPT", "read_export",
           "read_label_studio", "read_mturk", "read_prodigy", "read_sagemaker", "read_toloka"]
