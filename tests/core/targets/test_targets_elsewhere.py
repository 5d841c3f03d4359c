"""Evidence from elsewhere is a property of the profile (TargetProfile.inspects_machine), not the
name "log": a kind the project does not have (a customer's journal export) that says so gets no
collector of this machine either, and its pages say so in the generic words (issue 26, item 2)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fallback_doctor.core.language.texts import label
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.readers.collect.run import CollectRequest, collect_snapshot
from fallback_doctor.core.readers.targets.builtin import LOG, PYTHON
from fallback_doctor.core.readers.targets.profile import ResolveOptions, TargetProfile
from fallback_doctor.core.readers.targets.registry import registered
from fallback_doctor.core.readers.targets.spec import TargetSpec
from fallback_doctor.core.views.measures import no_inference_words
from fallback_doctor.core.views.pages_log_stack import elsewhere_note

LOG_FILE = Path(__file__).parents[2] / "data" / "logs" / "corpus_cublaslt11.log"


def _resolve(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    return TargetFacts(
        kind="journal-export",
        root=None,
        config_path=None,
        log_paths=spec.logs,
        lib_path=None,
        requested_provider=None,
        pid=None,
    )


EXPORT = TargetProfile(
    kind="journal-export",
    help="journal-export (a customer's journal, exported: --log)",
    resolve=_resolve,
    inspects_machine=False,
)


def test_the_built_in_log_is_the_only_kind_from_elsewhere() -> None:
    assert LOG.inspects_machine is False and LOG.probe is None
    assert PYTHON.inspects_machine is True


def test_a_registered_kind_from_elsewhere_collects_nothing_of_this_machine() -> None:
    spec = TargetSpec(kind="journal-export", logs=(str(LOG_FILE),))
    with registered(EXPORT):
        snapshot = collect_snapshot(CollectRequest(target=spec, env={"PATH": "/usr/bin"}))
    assert snapshot.target is not None and snapshot.target.kind == "journal-export"
    assert snapshot.log is not None and snapshot.log.causes
    assert snapshot.log.named is not None and snapshot.log.named.missing_libraries == ("libcublasLt.so.11",)
    machine = (snapshot.platform, snapshot.python, snapshot.onnxruntime, snapshot.driver, snapshot.device)
    assert machine == (None,) * 5
    assert (snapshot.libraries, snapshot.native, snapshot.process) == (None, None, None)
    assert snapshot.environment == {}
    assert [outcome.name for outcome in snapshot.collectors] == ["target", "log"]


def test_its_pages_say_why_in_the_generic_words() -> None:
    document = {"target": {"kind": "journal-export"}, "environment": {}}
    with registered(EXPORT):
        for lang in ("en", "ko"):
            assert elsewhere_note(document, lang) == label("stack.elsewhere.other", lang)
            assert no_inference_words(document, lang) == label("nothing_to_run.other", lang)
    python = {"target": {"kind": "python"}, "environment": {}}
    assert elsewhere_note(python, "en") == "" and no_inference_words(python, "en") == ""
