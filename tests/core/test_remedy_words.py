"""A remedy's prose (a command's comment, a manual step, where code goes) is catalogue words,
put in the reader's language by id; a document of a previous version shows its English as written."""

from __future__ import annotations

from fallback_doctor.core.document.basics import to_jsonable
from fallback_doctor.core.document.remedy import remedy_lines
from fallback_doctor.core.document.script import fix_script
from fallback_doctor.core.judgement.checks.driver_state import container_gpu_commands
from fallback_doctor.core.language.evidence_text import code_step, manual_step
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.result import Layer, Severity


def _document(**made: object) -> dict[str, object]:
    finding = make_finding(
        "driver.missing.container", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, **made
    )  # type: ignore[arg-type]
    return to_jsonable(finding)  # type: ignore[no-any-return]


def test_a_commands_comment_is_english_in_the_document_and_korean_where_shown() -> None:
    document = _document(commands=container_gpu_commands("docker"))
    remediation = document["remediation"]
    assert isinstance(remediation, dict)
    assert remediation["commands"][0] == "nvidia-smi    # on the host: the driver must work there first"
    assert remediation["comments"][0] == {"id": "remedy.comment.host_driver_first", "params": {}}
    assert remediation["comments"][2] is None  # docker run ... has no comment
    korean = [text for _, text in remedy_lines(remediation, "ko")]
    assert korean[0] == "nvidia-smi    # 호스트에서 실행: 먼저 호스트에서 드라이버가 동작해야 합니다"
    assert korean[2] == remediation["commands"][2]
    assert korean[3].startswith("# docker compose에서는: deploy.resources")


def test_a_manual_step_and_where_code_goes_are_shown_by_their_ids() -> None:
    steps = (
        code_step("import onnxruntime", "remedy.code_where.first_session"),
        manual_step("remedy.manual.restart_server"),
    )
    remediation = _document(steps=steps)["remediation"]
    assert isinstance(remediation, dict)
    assert remediation["steps"][1]["text"] == "Restart the server."
    korean = [text for _, text in remedy_lines(remediation, "ko")]
    assert "첫 InferenceSession을 만들기 전에" in korean[0]
    assert korean[-1] == "서버를 다시 시작하세요."
    script = fix_script(_document(steps=steps), "ko")
    assert "첫 InferenceSession을 만들기 전에" in script


def test_a_document_without_the_ids_shows_its_english_as_written() -> None:
    remediation = {
        "summary": "",
        "commands": ["nvidia-smi    # on the host"],
        "steps": [],
    }
    assert remedy_lines(remediation, "ko") == [("command", "nvidia-smi    # on the host")]
    old_steps = {"summary": "", "steps": [{"kind": "manual", "text": "Restart the server."}]}
    assert remedy_lines(old_steps, "ko") == [("text", "Restart the server.")]
