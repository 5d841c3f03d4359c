"""Finding ids are declared beside the code that makes them, spelled out there, and have their texts.

The declarations (``FINDINGS`` at the top of each module that makes findings, listed in
core/judgement/registry.py) against the code (core/, cli/) and the finding-text catalog
(resources/texts/<lang>/findings/*.json; the labels under resources/texts/<lang>/labels/ are not
finding texts). A new finding is two files and a test: its module (declaration and code) and its texts.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from fallback_doctor.core.judgement.judge import SettleContext, settle_findings
from fallback_doctor.core.judgement.registry import (
    DECLARATIONS,
    UndeclaredFindingError,
    check_declared,
    declared,
)
from fallback_doctor.core.language.texts import LANGUAGES, make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ROOT = Path(__file__).resolve().parents[1]
TEXT_FILES = sorted((ROOT / "resources" / "texts").glob("*/findings/*.json"))
CODE = sorted(
    path
    for folder in ("core", "cli")
    for path in (ROOT / folder).rglob("*.py")
    if "__pycache__" not in path.parts
)

# Texts in the finding catalog that are not findings: notes rendered with render_text.
NOTE_TEXTS = {
    "target.information_only": (
        "a note under the configuration's findings (core/judgement/judge.py, core/flow/diagnosis.py)"
    ),
    "target.then_also": (
        "the CPU setting's fix names the libPath finding that must follow (core/judgement/judge.py)"
    ),
}

# Declared ids whose texts lack the verify line (or fix) still: the owner of the texts writes it,
# then removes the entry. Notes (every severity INFO) need neither: nothing to fix or verify.
VERIFY_TO_WRITE: dict[str, str] = {
    "log.unreadable": "the log texts",
    "log.fell_back": "the log texts",
    "log.cause": "the log texts",
    "inference.partial_placement": "the inference texts",
    "inference.outputs_differ": "the inference texts",
    "inference.probe_failed": "the inference texts",
    "inference.unusable_model": "the inference texts",
}


def _catalog() -> dict[str, dict[str, object]]:
    """``{id: {lang: texts}}`` from every language's finding files."""
    merged: dict[str, dict[str, object]] = {}
    for path in TEXT_FILES:
        lang = path.parent.parent.name
        for finding_id, texts in json.loads(path.read_text(encoding="utf-8")).items():
            merged.setdefault(finding_id, {})[lang] = texts
    return merged


def _code_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in CODE)


def _string_constants(tree: ast.AST) -> list[ast.Constant]:
    """The string literals of a module, less the ids that FindingSpec(...) declares."""
    declaring = {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "FindingSpec"
        and node.args
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in declaring
    ]


def test_the_judge_refuses_an_undeclared_or_different_finding() -> None:
    """Every finding passes the judge before a document: one that is not declared, or that was made
    with another cause, layer or severity than its declaration, fails loudly there."""
    context = SettleContext()
    made = make_finding("cuda.runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR)
    assert settle_findings([made], context) == (made,)
    # "target.information_only" has texts (a note) but no declaration.
    note = make_finding("target.information_only", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR)
    with pytest.raises(UndeclaredFindingError, match="not declared"):
        settle_findings([made, note], context)
    other_cause = make_finding("cuda.runtime_missing", Cause.DRIVER_MISSING, Layer.CUDA, Severity.ERROR)
    with pytest.raises(UndeclaredFindingError, match="declared as"):
        settle_findings([other_cause], context)
    with pytest.raises(UndeclaredFindingError, match="made as info"):
        settle_findings([dataclasses.replace(made, severity=Severity.INFO)], context)


def test_a_finding_lowered_under_a_cpu_configuration_is_settled_again() -> None:
    """Under a CPU configuration the judge lowers GPU-stack findings to information; each wizard step
    settles the document again, and the lowered finding still passes its declaration."""
    cpu = make_finding("config.cpu_by_configuration", Cause.CPU_BY_CONFIGURATION, Layer.CONFIG, Severity.INFO)
    made = make_finding("cuda.runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR)
    once = settle_findings([cpu, made], SettleContext(config_path="/etc/app.json"))
    assert [f.severity for f in once] == [Severity.INFO, Severity.INFO]
    assert settle_findings(once, SettleContext(config_path="/etc/app.json")) == once
    # Checked again after the configuration asks for the GPU: the lowered finding, kept (an inference
    # finding of the wizard's earlier GPU retry), still passes; one made as information does not.
    assert settle_findings([once[1]], SettleContext()) == (once[1],)
    with pytest.raises(UndeclaredFindingError, match="made as info"):
        settle_findings([dataclasses.replace(made, severity=Severity.INFO)], SettleContext())


def test_the_registry_refuses_an_undeclared_or_different_finding() -> None:
    with pytest.raises(UndeclaredFindingError, match="not declared"):
        check_declared("cuda.no_such_finding", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR)
    with pytest.raises(UndeclaredFindingError, match="declared as"):
        check_declared("cuda.runtime_missing", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR)
    with pytest.raises(UndeclaredFindingError, match="declared"):
        check_declared("cuda.runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.INFO)
    spec = check_declared("cuda.runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR)
    assert spec.id == "cuda.runtime_missing"


def test_every_declared_id_has_its_texts_in_every_language() -> None:
    catalog = _catalog()
    problems: list[str] = []
    for finding_id, spec in declared().items():
        entry = catalog.get(finding_id)
        if entry is None:
            problems.append(f"{finding_id}: no texts")
            continue
        parts = ["title", "detail"]
        if not spec.notes_only and finding_id not in VERIFY_TO_WRITE:
            parts += ["fix", "verify"]
        for lang in LANGUAGES:
            texts = entry.get(lang)
            assert isinstance(texts, dict), f"{finding_id} has no {lang} texts"
            problems.extend(f"{finding_id}: no {lang} {part}" for part in parts if not texts.get(part))
    assert problems == []


def test_no_finding_text_without_a_declared_id() -> None:
    undeclared = sorted(set(_catalog()) - set(declared()) - set(NOTE_TEXTS))
    assert undeclared == [], (
        "declare these (FINDINGS of the module that makes them) or move them to "
        "resources/texts/<lang>/labels/"
    )
    assert not set(NOTE_TEXTS) & set(declared())


def test_every_exception_is_still_needed() -> None:
    catalog = _catalog()
    written = [
        finding_id
        for finding_id in VERIFY_TO_WRITE
        if all(
            isinstance(catalog.get(finding_id, {}).get(lang), dict)
            and catalog[finding_id][lang].get("verify")  # type: ignore[index, union-attr]
            for lang in LANGUAGES
        )
    ]
    assert written == [], "remove these from VERIFY_TO_WRITE: their verify line is there"
    code = _code_text()
    assert all(f'"{note}"' in code for note in NOTE_TEXTS)


def test_every_declared_id_is_written_out_where_it_is_made() -> None:
    """One search for an id finds its code: each declared id stands in full in core/ or cli/."""
    literals = {node.value for path in CODE for node in _string_constants(ast.parse(path.read_text("utf-8")))}
    missing = sorted(set(declared()) - literals)
    assert missing == [], "no code makes these ids (or composes them at run time): write them out"


def test_no_finding_id_is_composed_at_run_time() -> None:
    """No f-string or `+` builds a string that starts like a finding id ("cudnn.missing" + lazy)."""
    prefixes = sorted({finding_id.split(".", 1)[0] + "." for finding_id in declared()})
    starts = re.compile("^(" + "|".join(re.escape(prefix) for prefix in prefixes) + ")")
    composed: list[str] = []
    for path in CODE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            head: object = None
            if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                head = node.values[0].value
            elif (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Add)
                and isinstance(node.left, ast.Constant)
            ):
                head = node.left.value
            if isinstance(head, str) and starts.match(head) and " " not in head:
                composed.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert composed == []


NAMES_WITHOUT_MAKING = {
    ROOT / "core" / "judgement" / "judge.py": "ranks, merges and supersedes findings by id; makes none",
}
"""Modules that name declared ids without making findings of them (so without declaring them)."""


def _declaring_files() -> dict[str, Path]:
    """Every declared id -> the file of the module that declares it."""
    return {
        spec.id: Path(str(inspect.getsourcefile(module))).resolve()
        for module in DECLARATIONS
        for spec in module.FINDINGS
    }


def _written_ids(path: Path) -> set[str]:
    """The declared ids a module writes out (its string literals, less its declarations)."""
    known = declared()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.value for node in _string_constants(tree) if node.value in known}


def test_every_id_is_declared_in_the_very_module_that_writes_it_out() -> None:
    """The declaration stands beside the code that makes the finding (as pylint and ruff declare their
    messages): each declared id is written out in the module that declares it, and in no other module
    of core/ or cli/ but those that name ids without making findings (the judge)."""
    declaring = _declaring_files()
    problems = [
        f"{finding_id}: declared in {home.relative_to(ROOT)}, not written out there"
        for finding_id, home in declaring.items()
        if finding_id not in _written_ids(home)
    ]
    for path in CODE:
        if path in NAMES_WITHOUT_MAKING:
            continue
        problems.extend(
            f"{path.relative_to(ROOT)}: {finding_id} (declared in {declaring[finding_id].relative_to(ROOT)})"
            for finding_id in sorted(_written_ids(path))
            if declaring[finding_id] != path
        )
    assert problems == []
    for path in NAMES_WITHOUT_MAKING:
        assert "make_finding" not in path.read_text(encoding="utf-8"), f"{path} makes findings: declare them"


def test_every_module_that_declares_is_in_the_registry() -> None:
    """A module with ``FINDINGS`` at its top is listed in core/judgement/registry.py (else its ids
    would be refused by the judge while this test file saw nothing)."""
    declaring: set[Path] = set()
    for path in CODE:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "FINDINGS":
                declaring.add(path)
    assert declaring == set(_declaring_files().values())
    assert len(declaring) == len(DECLARATIONS)


def test_a_new_finding_costs_its_module_and_its_texts() -> None:
    """The change cost of a finding, traced per id: the files that hold it are its module (declaration
    and code) and its English texts; the other languages' catalogues follow the English file's name.
    Nothing else in core/ or cli/ lists it, so a new finding is 2 files and a test."""
    english = sorted((ROOT / "resources" / "texts" / "en" / "findings").glob("*.json"))
    texts_of: dict[str, set[Path]] = {}
    for path in english:
        for finding_id in json.loads(path.read_text(encoding="utf-8")):
            texts_of.setdefault(finding_id, set()).add(path)
    code_of: dict[str, set[Path]] = {}
    for path in CODE:
        if path not in NAMES_WITHOUT_MAKING:
            for finding_id in _written_ids(path):
                code_of.setdefault(finding_id, set()).add(path)
    declaring = _declaring_files()
    costs = {
        finding_id: {home, *code_of.get(finding_id, ()), *texts_of.get(finding_id, ())}
        for finding_id, home in declaring.items()
    }
    assert {finding_id: len(files) for finding_id, files in costs.items() if len(files) != 2} == {}
    for finding_id, files in costs.items():
        (text_file,) = texts_of[finding_id]
        assert files == {declaring[finding_id], text_file}
        for lang in LANGUAGES:
            other = text_file.parents[2] / lang / "findings" / text_file.name
            assert finding_id in json.loads(other.read_text(encoding="utf-8")), (finding_id, lang)


def _made_as_written(call: ast.Call) -> tuple[list[str], dict[str, str]]:
    """The ids a ``make_finding(...)`` call writes out (a literal, or both sides of a conditional)
    and the cause, layer and severity it writes out as ``Cause.X``, ``Layer.Y``, ``Severity.Z``."""
    first = call.args[0] if call.args else None
    options = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
    ids = [o.value for o in options if isinstance(o, ast.Constant) and isinstance(o.value, str)]
    written: dict[str, str] = {}
    for argument in call.args[1:4]:
        if isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name):
            kind = argument.value.id
            if kind in ("Cause", "Layer", "Severity"):
                written[kind] = getattr(
                    {"Cause": Cause, "Layer": Layer, "Severity": Severity}[kind], argument.attr
                )
    return ids, written


def test_each_finding_is_made_as_it_is_declared() -> None:
    """Where a ``make_finding`` call writes its id, cause, layer and severity out, they are the
    declaration's (the judge checks the rest at run time; this covers paths that show findings without
    the judge, such as ``test-inference``)."""
    known = declared()
    compared = 0
    problems: list[str] = []
    for path in CODE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "make_finding"):
                continue
            ids, written = _made_as_written(node)
            for finding_id in ids:
                spec = known[finding_id]
                declared_as = {"Severity": spec.severities}
                if spec.cause is not None:
                    declared_as |= {"Cause": (spec.cause,), "Layer": (spec.layer,)}
                for kind, value in written.items():
                    compared += 1
                    if kind in declared_as and value not in declared_as[kind]:
                        problems.append(
                            f"{path.relative_to(ROOT)}:{node.lineno}: {finding_id} made with {value}"
                        )
    assert problems == []
    assert compared > 150, compared


def test_every_declared_id_says_whether_it_can_cause_the_fallback() -> None:
    """Each FindingSpec declares its role: only a finding that can cause the fallback can be a cause
    (ranked above the context, the first answer); the rest is context below the causes."""
    assert _roleless(declared().values()) == [], "declare role=Role.DECIDES, CAUSE or CONTEXT on these"
    roles = {finding_id: spec.role for finding_id, spec in declared().items()}
    # What the issue (26) named as context, and the configuration that decides CPU or GPU.
    for context in ("config.path_missing.licenseFile", "log.fell_back", "log.clean", "collect.failed"):
        assert roles[context] is Role.CONTEXT, context
    for deciding in ("config.cpu_by_configuration", "config.provider_not_set", "target.libpath_cpu_only"):
        assert roles[deciding] is Role.DECIDES, deciding
    # A deciding finding is about the configuration or the libPath it names, nothing else.
    deciding_layers = {declared()[i].layer for i, role in roles.items() if role is Role.DECIDES}
    assert deciding_layers <= {Layer.CONFIG, Layer.PACKAGE}
    # Every layer of the GPU stack has causes: a check of that layer that is only context is a mistake.
    for layer in (Layer.DRIVER, Layer.DEVICE, Layer.CUDA, Layer.CUDNN, Layer.TENSORRT, Layer.PACKAGE):
        assert any(spec.layer == layer and spec.role is Role.CAUSE for spec in declared().values()), layer


def test_a_spec_without_a_role_is_found() -> None:
    """The check above can fail: a declaration that leaves the role out is reported."""
    spec = FindingSpec("cuda.example", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR)
    assert _roleless([*declared().values(), spec]) == ["cuda.example"]


def _roleless(specs: Iterable[FindingSpec]) -> list[str]:
    return sorted(spec.id for spec in specs if spec.role is None)
