"""Export from a results dataset: ``export --results hf://datasets/OWNER/NAME[@REVISION]``.

The revision is resolved to a commit once and every part of the dataset is read whole at that commit
(:func:`memeval_core.hub_results.read_dataset`); the runs then go through the same writer as a folder's
(:func:`memeval_core.export.writer.write_export`), so rows, details and snapshot are those of an export of the
folder that was pushed. What differs is where they came from:

- ``inputs`` are the part files the export read (path in the dataset, SHA-256 checked against the manifest), so
  the fingerprint names the dataset's content at that commit; the files a part was pushed from are not in the
  dataset. A part file's licence is the one licence the catalogue records for every file its runs were pushed from
  (known by their SHA-256), else ``unknown``: a dataset carries no ``LICENSE`` or ``PROVENANCE.md`` to read.
- Text is withheld by the same rule as for a folder, each run's licence again from the catalogue: a run the
  catalogue does not know counts as ``unknown``, so its benchmark's text stays out unless ``include_text``.
- The README and the details card name the dataset and the commit, and reproduce from that commit.
"""

from __future__ import annotations

from memeval_core import licences
from memeval_core.export.models import InputFile
from memeval_core.export.writer import ExportSource, qa_part, sorted_inputs, withheld_text
from memeval_core.hub_location import HubLocation
from memeval_core.hub_results import DatasetContents, Part, read_dataset
from memeval_core.pmb.snapshot import FIXTURE_FILE
from memeval_core.qa.ingest import LoadedRun
from memeval_core.qa.snapshot import LOAD_FILE, QUESTIONS_FILE
from memeval_core.qa.snapshot import RUNS_FILE as QA_RUNS_FILE

_QA_FILES = frozenset({LOAD_FILE, QA_RUNS_FILE, QUESTIONS_FILE})


def _run_licences(run: LoadedRun) -> tuple[str]:
    # The SHA-256 of a run's one source file (of several files' hashes for a merged run, which no catalogue lists).
    return (licences.of_digest(run.meta.source_sha256),)


def _one_licence(found: set[str]) -> str:
    """The licence all the files share; ``unknown`` when they have several (or none)."""
    return next(iter(found)) if len(found) == 1 else licences.UNKNOWN


def _part_licences(contents: DatasetContents, part: Part) -> dict[str, str]:
    """``pmb`` and ``qa``: the one licence of every file the part's runs were pushed from, else ``unknown``."""
    pmb_ids, qa_ids = (set(ids) for ids in contents.part_runs[part.path])
    fixture = contents.pmb.fixture
    pmb = {licences.of_digest(r.identity.sha256) for r in contents.pmb.runs if r.identity.run_id in pmb_ids}
    pmb |= {licences.of_digest(sha) for sha in (fixture.sha256.values() if fixture and pmb_ids else ())}
    qa = {lic for r in contents.qa.runs if r.run_id in qa_ids for lic in _run_licences(r)}
    return {"pmb": _one_licence(pmb), "qa": _one_licence(qa)}


def dataset_inputs(contents: DatasetContents) -> tuple[InputFile, ...]:
    """The part files an export of ``contents`` read, with their roles and licences, by role then path."""
    out: list[InputFile] = []
    for part in contents.manifest.parts:
        licence = _part_licences(contents, part)
        for name in sorted(part.files):
            path = f"{part.path}/{name}"
            if path not in contents.files:
                continue  # listed, but not needed to rebuild the runs (e.g. the runs table)
            kind = "qa" if name in _QA_FILES else "pmb"
            role = "qa-run" if kind == "qa" else "pmb-fixture" if name == FIXTURE_FILE else "pmb-report"
            out.append(InputFile(path=path, sha256=contents.files[path], role=role, license=licence[kind]))
    return sorted_inputs(out)


def dataset_source(location: HubLocation, *, include_text: bool = False) -> ExportSource:
    """Every run of a results dataset at the commit its revision names now, ready for
    :func:`memeval_core.export.writer.write_export`; ``HubResultsError`` (one sentence) when it cannot be read."""
    contents = read_dataset(location)
    qa = contents.qa
    withheld = {} if include_text else withheld_text(qa, _run_licences)
    part = qa_part(qa, (), withheld) if qa.runs else None
    return ExportSource(
        name=str(location),
        pmb=contents.pmb,
        qa=part,
        inputs=dataset_inputs(contents),
        origin=str(HubLocation(location.repo_id, contents.commit)),
        private=(("Hugging Face cache", contents.cache),),
    )
