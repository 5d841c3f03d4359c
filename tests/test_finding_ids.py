"""Finding ids are declared, spelled out where they are made, and have their texts.

The registry (core/model/findings/) against the code (core/, cli/) and the finding-text catalog
(resources/texts/<lang>/findings/*.json; the labels under resources/texts/<lang>/labels/ are not
finding texts).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from fallback_doctor.core.language.texts import LANGUAGES, make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.registry import (
    DECLARATIONS,
    UndeclaredFindingError,
    check_declared,
    declared,
)
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
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


def test_the_registry_refuses_an_undeclared_or_different_finding() -> None:
    with pytest.raises(UndeclaredFindingError, match="not declared"):
        make_finding("cuda.no_such_finding", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR)
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
        "declare these in core/model/findings/ or move them to resources/texts/<lang>/labels/"
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


def test_a_check_module_makes_only_the_ids_its_own_declarations_hold() -> None:
    """core/judgement/checks/cuda.py's ids are declared in core/model/findings/cuda.py (driver_missing.py:
    driver.py)."""
    declaring = {
        spec.id: module.__name__.rsplit(".", 1)[1] for module in DECLARATIONS for spec in module.FINDINGS
    }
    producers = {path: path.stem for path in (ROOT / "core" / "judgement" / "checks").glob("*.py")}
    producers[ROOT / "core" / "readers" / "inference" / "findings.py"] = "inference"
    elsewhere: list[str] = []
    for path, stem in sorted(producers.items()):
        allowed = {stem, stem.split("_", 1)[0]}
        for node in _string_constants(ast.parse(path.read_text(encoding="utf-8"))):
            owner = declaring.get(node.value)
            if owner is not None and owner not in allowed:
                elsewhere.append(
                    f"{path.relative_to(ROOT)}:{node.lineno}: {node.value} (declared in {owner})"
                )
    assert elsewhere == []


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
