"""The one door from the wizard (gui/) into the core: everything the window needs, nothing more.

The GUI imports this module only (an import-linter contract in pyproject.toml says so, like
nvitop's banned-api rule for its frontend). Heavy parts (the sampler, bundles, the targets) are
imported when first called, so the window still opens in about a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fallback_doctor.core.language.texts import LANGUAGES, has_label, label, system_language
from fallback_doctor.core.platform.frozen import module_argv

_PAGES = "fallback_doctor.core.views.pages"
_REMEDY = "fallback_doctor.core.document.remedy"
_TARGETS = "fallback_doctor.core.readers.targets.registry"
_VIEW = "fallback_doctor.core.document.view"


def _on_first_use(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported when first called: the window's first page needs only the labels,
    and core.pages (with the report, remedy and model modules under it) took ~35 ms to import."""

    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{module}.{name}`` (imported on first use)."
    return call


if TYPE_CHECKING:  # what mypy sees: the real functions, each with its real signature
    from fallback_doctor.core.bundle.html_graph import (
        phase_name as phase_name,
    )
    from fallback_doctor.core.bundle.manifest import cut_words as cut_words
    from fallback_doctor.core.bundle.naming import (
        default_bundle_name as default_bundle_name,
    )
    from fallback_doctor.core.bundle.preview import BundleOptions as BundleOptions
    from fallback_doctor.core.bundle.preview import BundlePreview as BundlePreview
    from fallback_doctor.core.bundle.preview import ExtraMember as ExtraMember
    from fallback_doctor.core.document.remedy import (
        remedy_lines as remedy_lines,
    )
    from fallback_doctor.core.document.remedy import (
        remedy_plain as remedy_plain,
    )
    from fallback_doctor.core.document.view import Evidence as Evidence
    from fallback_doctor.core.document.view import Finding as Finding
    from fallback_doctor.core.document.view import JsonDocument
    from fallback_doctor.core.document.view import Report as Report
    from fallback_doctor.core.document.view import evidence_words as evidence_words
    from fallback_doctor.core.document.view import finding_of as finding_of
    from fallback_doctor.core.document.view import view_of as view_of
    from fallback_doctor.core.language.evidence_text import (
        said_text as said_text,
    )
    from fallback_doctor.core.language.evidence_text import (
        source_name as source_name,
    )
    from fallback_doctor.core.platform.files import (
        read_regular_text as read_regular_text,
    )
    from fallback_doctor.core.readers.inference.model_words import (
        model_choice as model_choice,
    )
    from fallback_doctor.core.readers.inference.model_words import (
        model_line as model_line,
    )
    from fallback_doctor.core.readers.inference.model_words import (
        placement_words as placement_words,
    )
    from fallback_doctor.core.readers.sampling.sample import (
        sentence_words_of as sentence_words_of,
    )
    from fallback_doctor.core.readers.sampling.sampler import Sampler as Sampler
    from fallback_doctor.core.readers.sampling.sources import SampleSource as SampleSource
    from fallback_doctor.core.readers.targets.profile import TargetProfile, WizardField
    from fallback_doctor.core.readers.targets.registry import (
        wizard_profiles as wizard_profiles,
    )
    from fallback_doctor.core.readers.targets.registry import (
        wizard_target as wizard_target,
    )
    from fallback_doctor.core.redaction.redaction import Redaction as Redaction
    from fallback_doctor.core.views.measures import (
        CpuView as CpuView,
    )
    from fallback_doctor.core.views.measures import (
        GpuSummary as GpuSummary,
    )
    from fallback_doctor.core.views.measures import (
        progress_words as progress_words,
    )
    from fallback_doctor.core.views.pages import STACK_LAYERS as STACK_LAYERS
    from fallback_doctor.core.views.pages import ConfigView as ConfigView
    from fallback_doctor.core.views.pages import LogView as LogView
    from fallback_doctor.core.views.pages import (
        all_findings as all_findings,
    )
    from fallback_doctor.core.views.pages import (
        check_again_step as check_again_step,
    )
    from fallback_doctor.core.views.pages import (
        config_view as config_view,
    )
    from fallback_doctor.core.views.pages import (
        cpu_view as cpu_view,
    )
    from fallback_doctor.core.views.pages import (
        elsewhere_note as elsewhere_note,
    )
    from fallback_doctor.core.views.pages import (
        fact_rows as fact_rows,
    )
    from fallback_doctor.core.views.pages import (
        finding_words as finding_words,
    )
    from fallback_doctor.core.views.pages import (
        first_cause as first_cause,
    )
    from fallback_doctor.core.views.pages import (
        fix_script as fix_script,
    )
    from fallback_doctor.core.views.pages import (
        gpu_headline as gpu_headline,
    )
    from fallback_doctor.core.views.pages import (
        gpu_summary as gpu_summary,
    )
    from fallback_doctor.core.views.pages import (
        issue_words as issue_words,
    )
    from fallback_doctor.core.views.pages import (
        layer_parts as layer_parts,
    )
    from fallback_doctor.core.views.pages import (
        library_rows as library_rows,
    )
    from fallback_doctor.core.views.pages import (
        log_view as log_view,
    )
    from fallback_doctor.core.views.pages import (
        no_inference_words as no_inference_words,
    )
    from fallback_doctor.core.views.pages import (
        session_rows as session_rows,
    )
    from fallback_doctor.core.views.pages import (
        stack_layers as stack_layers,
    )
    from fallback_doctor.core.views.pages import (
        strategy_lines as strategy_lines,
    )
    from fallback_doctor.core.views.pages import (
        verdict_words as verdict_words,
    )
else:  # what runs: each imported on first call
    all_findings = _on_first_use(_PAGES, "all_findings")
    check_again_step = _on_first_use(_PAGES, "check_again_step")
    config_view = _on_first_use(_PAGES, "config_view")
    cpu_view = _on_first_use(_PAGES, "cpu_view")
    elsewhere_note = _on_first_use(_PAGES, "elsewhere_note")
    no_inference_words = _on_first_use(_PAGES, "no_inference_words")
    finding_words = _on_first_use(_PAGES, "finding_words")
    first_cause = _on_first_use(_PAGES, "first_cause")
    fix_script = _on_first_use(_PAGES, "fix_script")
    gpu_headline = _on_first_use(_PAGES, "gpu_headline")
    gpu_summary = _on_first_use(_PAGES, "gpu_summary")
    issue_words = _on_first_use(_PAGES, "issue_words")
    layer_parts = _on_first_use(_PAGES, "layer_parts")
    progress_words = _on_first_use("fallback_doctor.core.views.measures", "progress_words")
    fact_rows = _on_first_use(_PAGES, "fact_rows")
    library_rows = _on_first_use(_PAGES, "library_rows")
    said_text = _on_first_use("fallback_doctor.core.language.evidence_text", "said_text")
    source_name = _on_first_use("fallback_doctor.core.language.evidence_text", "source_name")
    sentence_words_of = _on_first_use("fallback_doctor.core.readers.sampling.sample", "sentence_words_of")
    phase_name = _on_first_use("fallback_doctor.core.bundle.html_graph", "phase_name")
    log_view = _on_first_use(_PAGES, "log_view")
    session_rows = _on_first_use(_PAGES, "session_rows")
    stack_layers = _on_first_use(_PAGES, "stack_layers")
    strategy_lines = _on_first_use(_PAGES, "strategy_lines")
    verdict_words = _on_first_use(_PAGES, "verdict_words")
    default_bundle_name = _on_first_use("fallback_doctor.core.bundle.naming", "default_bundle_name")
    cut_words = _on_first_use("fallback_doctor.core.bundle.manifest", "cut_words")
    wizard_profiles = _on_first_use(_TARGETS, "wizard_profiles")
    wizard_target = _on_first_use(_TARGETS, "wizard_target")
    model_choice = _on_first_use("fallback_doctor.core.readers.inference.model_words", "model_choice")
    model_line = _on_first_use("fallback_doctor.core.readers.inference.model_words", "model_line")
    placement_words = _on_first_use("fallback_doctor.core.readers.inference.model_words", "placement_words")
    remedy_lines = _on_first_use(_REMEDY, "remedy_lines")
    remedy_plain = _on_first_use(_REMEDY, "remedy_plain")
    read_regular_text = _on_first_use("fallback_doctor.core.platform.files", "read_regular_text")
    view_of = _on_first_use(_VIEW, "view_of")
    finding_of = _on_first_use(_VIEW, "finding_of")
    evidence_words = _on_first_use(_VIEW, "evidence_words")

    def __getattr__(name: str) -> object:
        """``STACK_LAYERS`` (core/views/pages.py), also imported on first use."""
        if name == "STACK_LAYERS":
            from fallback_doctor.core.views.pages import STACK_LAYERS

            return STACK_LAYERS
        raise AttributeError(name)


__all__ = [
    "LANGUAGES",
    "STEP_CHILD_MODULE",
    "all_findings",
    "apply_inspection",
    "apply_outcome",
    "bundle_members",
    "check_again_step",
    "config_view",
    "cpu_view",
    "cut_words",
    "default_bundle_name",
    "elsewhere_note",
    "evidence_words",
    "export_available",
    "export_bundle",
    "fact_rows",
    "find_installations",
    "finding_of",
    "finding_words",
    "first_cause",
    "fix_script",
    "gpu_headline",
    "gpu_summary",
    "has_label",
    "issue_words",
    "label",
    "layer_parts",
    "library_rows",
    "log_view",
    "model_choice",
    "model_line",
    "module_argv",
    "new_sampler",
    "no_inference_words",
    "open_bundle",
    "phase_name",
    "placement_words",
    "preload",
    "progress_words",
    "read_regular_text",
    "remedy_lines",
    "remedy_plain",
    "said_text",
    "save_report_html",
    "sentence_words_of",
    "session_rows",
    "source_name",
    "stack_layers",
    "strategy_lines",
    "system_language",
    "verdict_words",
    "view_of",
    "wizard_field",
    "wizard_profiles",
    "wizard_target",
]

STEP_CHILD_MODULE = "fallback_doctor.core.flow.step_child"
"""``python -m`` this to run one step in a child process (core/flow/step_child.py)."""


def wizard_field(profile: TargetProfile) -> WizardField:
    """The page-1 field of a profile that ``wizard_profiles`` listed (each of those has one)."""
    if profile.wizard is None:
        raise ValueError(f"target kind {profile.kind!r} has no field on the wizard's first page")
    return profile.wizard


def apply_outcome(document: JsonDocument, outcome: JsonDocument) -> JsonDocument:
    """The document with a CPU-baseline or GPU-retry outcome added, re-ranked and re-judged."""
    from fallback_doctor.core.flow.steps import StepOutcome, apply_step

    return apply_step(document, StepOutcome.from_json(outcome))


def apply_inspection(previous: JsonDocument | None, static: JsonDocument) -> JsonDocument:
    """A new static inspection, the test inference done so far kept, re-judged."""
    from fallback_doctor.core.flow.steps import apply_inspection as apply

    return apply(previous, static)


def open_bundle(path: str) -> JsonDocument:
    """``{"document", "info"}`` of a bundle (refused with the reason when it is not a valid one)."""
    from fallback_doctor.core.bundle.replay import open_for_showing

    return open_for_showing(path)


def bundle_members(document: JsonDocument) -> list[ExtraMember]:
    """The bundle's members besides the report, from the document (as `diagnose --bundle` makes them)."""
    from fallback_doctor.core.bundle.members import bundle_members as members

    return members(document)


def bundle_options(
    *,
    redact: bool = True,
    exclude: frozenset[str] = frozenset(),
    redact_more: tuple[str, ...] = (),
    lang: str = "en",
) -> BundleOptions:
    """BundleOptions (core/bundle/preview.py) for the preview: the choices the dialog offers."""
    from fallback_doctor.core.bundle.preview import BundleOptions

    return BundleOptions(redact=redact, exclude=exclude, redact_more=redact_more, lang=lang)


def prepare_bundle(
    document: JsonDocument, members: list[ExtraMember] | None, options: BundleOptions
) -> tuple[BundlePreview, list[ExtraMember]]:
    """The preview of a bundle (nothing written) and the members it was made from."""
    from fallback_doctor.core.bundle.export import prepare_bundle as prepare

    chosen = members if members is not None else bundle_members(document)
    return prepare(document, chosen, options), chosen


def required_members() -> frozenset[str]:
    """Members a bundle always holds (they cannot be left out in the preview)."""
    from fallback_doctor.core.bundle.preview import REQUIRED_MEMBERS

    return frozenset(REQUIRED_MEMBERS)


def write_bundle(preview: BundlePreview, path: str, force: bool) -> str:
    """Write a prepared bundle; returns the path written."""
    from fallback_doctor.core.bundle.write import write_bundle as write

    return str(write(preview, path, force=force).path)


def export_bundle(document: JsonDocument, path: str, lang: str) -> str:
    """Write the document as a redacted bundle without a preview; never replaces a file."""
    from fallback_doctor.core.bundle.export import export_bundle as export
    from fallback_doctor.core.bundle.preview import BundleOptions

    result = export(document, path, bundle_members(document), BundleOptions(lang=lang), force=False)
    return str(getattr(result, "path", path))


def save_report_html(document: JsonDocument, path: str, lang: str) -> str:
    """Write the bundle's report.html alone (redacted as in the bundle); returns the path written."""
    from fallback_doctor.core.bundle.report_file import save_report_html as save

    return save(document, path, lang)


def export_available() -> bool:
    """Whether this build can write bundles."""
    import importlib.util

    try:
        return importlib.util.find_spec("fallback_doctor.core.bundle.export") is not None
    except (ImportError, ValueError):
        return False


def new_sampler(source_factory: Callable[[], SampleSource] | None = None) -> Sampler:
    """A sampler for the live graph: NVML (or ``source_factory()``) and the probe's CPU, 5 Hz."""
    from fallback_doctor.core.readers.sampling.sampler import Sampler
    from fallback_doctor.core.readers.sampling.sources import NvmlSource, PsutilCpuSource

    source = source_factory() if source_factory is not None else NvmlSource()
    return Sampler(source, PsutilCpuSource(include_children=True), interval_s=0.2, stop_when_finished=False)


def preload() -> None:
    """Import the sampler's modules (and NVML's binding) ahead of the GPU page."""
    import fallback_doctor.core.readers.sampling.sampler
    import fallback_doctor.core.readers.sampling.sources  # noqa: F401

    try:
        import pynvml  # noqa: F401
    except ImportError:
        pass


def find_installations(environ: dict[str, str]) -> list[str]:
    """The Bareun installations on this machine: BAREUN_ROOT's first, then the default places."""
    import os

    from fallback_doctor.core.readers.targets import bareun

    roots: list[str] = []
    found = bareun.find_root(environ)
    if found is not None:
        roots.append(found[0])
    for root in bareun.default_roots():
        if root not in roots and os.path.isdir(root) and bareun.looks_like_bareun(root):
            roots.append(root)
    return roots
