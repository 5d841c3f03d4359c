"""A finding's fix as one bash script that runs as it is: what "Copy the fix" copies.

The report document carries it (``remediation.script``, core/flow/steps.py adds it); the wizard's copy
button, the text report, the bundle and report.html show the same text. The rules (issue 26):

- prose is ``#`` comments: the fix's sentence, where a step runs, each manual step;
- only the recommended option (option 1): an alternative is never pasted by accident;
- Python is a here-document for the application's interpreter (``"$PY" - <<'EOF'``), never a
  bare ``import`` that a shell would run as ImageMagick's;
- a placeholder (``<image>``) becomes a variable that stops the script until it is set
  (``: "${IMAGE:?…}"``);
- a download (``pip install``, ``curl``) has its offline form beside it as comments;
- the verify command comes last.

Pure: works on the document's finding (plain JSON), so a bundle opened elsewhere gives the same.
By hand: ``bash -n`` and ``shellcheck -s bash`` on the text (tests/core/test_script.py does).
"""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from collections.abc import Iterator, Mapping
from typing import Any

from fallback_doctor.core.document.remedy import commands_in, step_words
from fallback_doctor.core.document.view import Finding, finding_words
from fallback_doctor.core.language.texts import label

WIDTH = 78
"""Comment lines are wrapped here (a terminal's width, less the prompt)."""

_PLACEHOLDER = re.compile(r"<([A-Za-z][A-Za-z0-9 _-]{0,30})>")
_BACKTICKED = re.compile(r"`([^`]+)`|“([^”]+)”")
"""A command quoted in a sentence: in backticks (English) or in “ ” (Korean prose has no backticks)."""
_DOUBLE_QUOTED_SPECIAL = re.compile(r'(["\\$`])')


def fix_script(finding: Mapping[str, Any], lang: str = "en", python: str | None = None) -> str:
    """The fix of ``finding`` (a document's finding) as a bash script; "" when it has nothing to do.

    ``python``: the application's interpreter (``PY``); without it the script asks for ``PY`` when
    it runs Python. By hand: paste it into ``bash -n`` to see that it parses.
    """
    remediation = finding.get("remediation")
    if not isinstance(remediation, Mapping):
        return ""
    words = _words(finding, remediation, lang)
    body = list(_body(remediation, lang))
    verify = list(_verify(words.get("verify") or "", lang))
    if not body and not verify and not words.get("fix"):
        return ""
    lines = [f"# {_one_line(words.get('title') or str(finding.get('id') or ''))}"]
    lines.extend(_comment(words.get("fix") or "", f"{label('report.fix', lang)}: "))
    needs_python = any('"$PY"' in line and not line.startswith("#") for line in body)
    if needs_python:
        if python:
            lines.append(f"PY={shlex.quote(python)}")
        else:
            lines.append(': "${PY:?' + _guard_words(label("script.python", lang)) + '}"')
    guarded: set[str] = set()
    for line in body:
        for name in _guarded(line):
            if name not in guarded:  # stops the script here until the value is set
                guarded.add(name)
                lines.append(
                    ': "${' + name + ":?" + _guard_words(label("script.set", lang, name=name)) + '}"'
                )
        lines.append(line)
    lines.extend(verify)
    return "\n".join(lines).rstrip() + "\n"


def _words(finding: Mapping[str, Any], remediation: Mapping[str, Any], lang: str) -> dict[str, str]:
    """Title, fix and verify line in ``lang`` (English where missing): core/document/view.py's
    ``finding_words``, as every renderer's."""
    words = finding_words({**finding, "remediation": remediation}, lang)
    return {"title": words["title"], "fix": words["fix"], "verify": words["verify"]}


def _body(remediation: Mapping[str, Any], lang: str) -> Iterator[str]:
    """The steps of option 1 as script lines (the plain commands when there are no typed steps)."""
    steps = [step for step in remediation.get("steps") or [] if isinstance(step, Mapping)]
    if not steps:
        for command in commands_in(remediation, lang):
            yield from _command_line(command)
        return
    first = min(int(step.get("option") or 1) for step in steps)
    where = "application"
    for step in steps:
        if int(step.get("option") or 1) != first:
            continue
        runs_on = str(step.get("where") or "application") if step.get("kind") == "run" else "application"
        if runs_on != where and runs_on in ("host", "container_host"):
            yield f"# --- {label(f'remedy.where.{runs_on}', lang)} ---"
        where = runs_on
        yield from _step(step, lang)


def _step(step: Mapping[str, Any], lang: str) -> Iterator[str]:
    kind = step.get("kind")
    if kind == "run":
        argv = [str(a) for a in step.get("argv") or []]
        yield from _offline(argv, lang)
        yield _shell_join(argv)
    elif kind == "code":
        yield from _comment(label("script.code", lang, where=step_words(step, "where", lang)))
        yield "\"$PY\" - <<'EOF'"
        yield from str(step.get("code") or "").rstrip("\n").splitlines()
        yield "EOF"
    elif kind == "config":
        yield from _config(step, lang)
    elif kind == "environment":
        yield from _environment(step, lang)
    else:
        yield from _comment(step_words(step, "text", lang))


def _command_line(text: str) -> Iterator[str]:
    """A command as the remediation wrote it ("cmd    # a comment", its comment already in the
    reader's language): the comment above it."""
    if text.lstrip().startswith("#"):
        yield from _comment(text.lstrip()[1:].strip())
        return
    code, _, comment = text.partition("  # ")
    if comment:
        yield from _comment(comment.strip())
    yield _PLACEHOLDER.sub(lambda m: '"$' + _variable(m.group(1)) + '"', code.strip())


def _config(step: Mapping[str, Any], lang: str) -> Iterator[str]:
    """A JSON setting changed by a short Python program (a copy of the file kept beside it)."""
    file = str(step.get("file") or "")
    pointer = str(step.get("pointer") or "")
    value = json.dumps(step.get("value"), ensure_ascii=False)
    yield from _comment(label("script.config", lang, file=file, pointer=pointer, value=value))
    keys = [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]
    yield f"cp -p {shlex.quote(file)} {shlex.quote(file + '.bak')}"
    yield f"python3 - {shlex.quote(file)} <<'EOF'"
    yield "import json, sys"
    yield "path = sys.argv[1]"
    yield "with open(path, encoding='utf-8') as f:"
    yield "    data = json.load(f)"
    # Names a redactor reads as nothing (no "node =", "key =": a host name, a secret to it).
    yield "place = data"
    yield f"names = {json.dumps(keys, ensure_ascii=False)}"
    yield "for name in names[:-1]:"
    yield "    place = place.setdefault(name, {})"
    yield f"place[names[-1]] = json.loads({json.dumps(value, ensure_ascii=False)})"
    yield "with open(path, 'w', encoding='utf-8') as f:"
    yield "    json.dump(data, f, indent=2, ensure_ascii=False)"
    yield "    f.write('\\n')"
    yield "EOF"


def _environment(step: Mapping[str, Any], lang: str) -> Iterator[str]:
    variables = {str(k): str(v) for k, v in dict(step.get("variables") or {}).items()}
    scope = step.get("scope")
    prepend = step.get("mode", "prepend") == "prepend"
    separator = str(step.get("separator") or ":")
    if scope == "systemd":
        unit = str(step.get("unit") or "") or "<service>"
        folder = f"/etc/systemd/system/{unit}.d"
        yield from _comment(label("remedy.environment.systemd", lang, unit=unit))
        yield f"sudo mkdir -p {_shell_word(folder)}"
        yield f"sudo tee {_shell_word(folder + '/fallback-doctor.conf')} >/dev/null <<'EOF'"
        yield "[Service]"
        yield from (f'Environment="{name}={value}"' for name, value in variables.items())
        yield "EOF"
        yield f"sudo systemctl daemon-reload && sudo systemctl restart {_shell_word(unit)}"
        return
    if scope == "container" or separator == ";":
        yield from _comment(
            label("remedy.environment.container", lang) if scope == "container" else "cmd.exe:"
        )
        for name, value in variables.items():
            yield "#   " + (f"-e {name}={value}" if scope == "container" else f"set {name}={value}")
        return
    for name, value in variables.items():
        tail = f"{separator}${{{name}:-}}" if prepend else ""
        yield f'export {name}="{_in_double_quotes(value)}{tail}"'


_PIP_VALUE_OPTIONS = frozenset(
    {"--target", "-t", "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi"}
)
"""pip install options whose value names where to install, not what: left out of ``pip download``."""
_PIP_INDEX_OPTIONS = frozenset({"--index-url", "-i", "--extra-index-url", "-f", "--find-links"})
"""Options that say where to fetch from: kept for ``pip download`` on the connected machine."""


def _offline(argv: list[str], lang: str) -> Iterator[str]:
    """The offline form of a download, as comments above it (an air-gapped site: README)."""
    if "pip" in argv and "install" in argv:
        at = argv.index("install")
        fetch: list[str] = []
        rest = iter(argv[at + 1 :])
        for arg in rest:
            if arg in _PIP_VALUE_OPTIONS:
                next(rest, None)
            elif arg in _PIP_INDEX_OPTIONS or arg in ("-r", "--requirement", "-c", "--constraint"):
                fetch.extend((arg, next(rest, "")))
            elif not arg.startswith("-"):
                fetch.append(arg)
        yield from _comment(label("script.offline.pip", lang))
        yield "#   python3 -m pip download --dest wheels " + _shell_join(fetch)
        yield from _comment(label("script.offline.carry", lang))
        installed = [*argv[: at + 1], "--no-index", "--find-links", "wheels", *argv[at + 1 :]]
        yield "#   " + _shell_join(_without_index(installed))
    elif argv[:1] == ["curl"] or argv[:1] == ["wget"]:
        url = next((a for a in argv if a.startswith(("http://", "https://"))), "")
        yield from _comment(label("script.offline.curl", lang, url=url))
    elif "apt-get" in argv[:2] and "install" in argv:
        packages = [a for a in argv[argv.index("install") + 1 :] if not a.startswith("-")]
        yield from _comment(label("script.offline.apt", lang))
        yield "#   apt-get download " + _shell_join(packages)
        yield from _comment(label("script.offline.deb", lang))
        yield "#   sudo dpkg -i ./*.deb"


def _without_index(argv: list[str]) -> list[str]:
    """``argv`` less the index options and their values (offline, the wheels folder is the index)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _PIP_INDEX_OPTIONS - {"-f", "--find-links"}:
            skip = True
        else:
            out.append(arg)
    return out


def _verify(text: str, lang: str) -> Iterator[str]:
    """The verify sentence as comments, then each command it quotes (the script's last lines)."""
    if not text:
        return
    yield from _comment(text, f"{label('report.verify', lang)}: ")
    for command in (ticked or quoted for ticked, quoted in _BACKTICKED.findall(text)):
        if " " in command or "/" in command:
            yield from _command_line(command)


def _shell_join(argv: list[str]) -> str:
    return " ".join(_shell_word(arg) for arg in argv)


def _shell_word(arg: str) -> str:
    """One argument quoted for bash; a placeholder in it becomes its variable."""
    if "${" in arg and not _PLACEHOLDER.search(arg):
        return f'"{arg}"'
    if not _PLACEHOLDER.search(arg):
        return shlex.quote(arg)
    parts = _PLACEHOLDER.split(arg)
    out = []
    for index, part in enumerate(parts):
        out.append("${" + _variable(part) + "}" if index % 2 else _in_double_quotes(part))
    return '"' + "".join(out) + '"'


def _in_double_quotes(text: str) -> str:
    return _DOUBLE_QUOTED_SPECIAL.sub(r"\\\1", text)


def _variable(placeholder: str) -> str:
    """``<image>`` -> IMAGE, ``<service name>`` -> SERVICE_NAME."""
    return re.sub(r"[^A-Z0-9]+", "_", placeholder.upper()).strip("_") or "VALUE"


def _guarded(line: str) -> list[str]:
    """The placeholder variables a (non-comment) line uses."""
    if line.startswith("#"):
        return []
    return [name for name in re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", line) if name not in _NOT_PLACEHOLDERS]


_NOT_PLACEHOLDERS = frozenset({"PY", "LD_LIBRARY_PATH", "PATH", "HOME", "CUDA_VISIBLE_DEVICES"})
"""Variables of the script or the environment, never a placeholder to fill in."""


def _guard_words(text: str) -> str:
    """Words safe inside ``${NAME:?…}`` within double quotes (no quote, brace or dollar)."""
    return re.sub(r"[\"'$`\\{}]", "", text)


def _comment(text: str, head: str = "") -> list[str]:
    words = _one_line(head + text)
    if not words:
        return []
    return textwrap.wrap(
        words,
        width=WIDTH,
        initial_indent="# ",
        subsequent_indent="#   ",
        break_long_words=False,
        break_on_hyphens=False,
    ) or ["#"]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def finding_script(finding: Finding | Mapping[str, Any], lang: str = "en", python: str | None = None) -> str:
    """The script a surface shows and copies: the document's own (``remediation.script``) in
    English, the same script with its comments in ``lang`` otherwise."""
    finding = finding.raw if isinstance(finding, Finding) else finding
    remediation = finding.get("remediation")
    stored = remediation.get("script") if isinstance(remediation, Mapping) else None
    if lang == "en" and isinstance(stored, str):
        return stored
    return fix_script(finding, lang, python)
