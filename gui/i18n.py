"""The wizard's own words, in English and Korean; the findings' words come from the report document.

``t(key, **params)`` gives the text in the current language (``set_language``). Every key has
both languages (tests/gui check it). The system locale picks the language at start; the
window has a button to switch.
"""

from __future__ import annotations

LANGUAGES = ("en", "ko")

LABELS: dict[str, dict[str, str]] = {
    "app.title": {"en": "GPU Fallback Doctor", "ko": "GPU Fallback Doctor"},
    "lang.switch": {"en": "한국어", "ko": "English"},
    "lang.switch.tip": {"en": "Show the window in Korean", "ko": "창을 영어로 표시합니다"},
    "button.next": {"en": "&Next >", "ko": "다음(&N) >"},
    "button.back": {"en": "< &Back", "ko": "< 이전(&B)"},
    "button.finish": {"en": "&Finish", "ko": "마침(&F)"},
    "button.close": {"en": "&Close", "ko": "닫기(&C)"},
    "button.stop": {"en": "&Stop", "ko": "중지(&S)"},
    "button.stop.tip": {
        "en": "Stop the step that is running now (the test process is killed)",
        "ko": "지금 실행 중인 단계를 멈춥니다(테스트 프로세스를 종료합니다)",
    },
    "table.columns": {"en": "column headings", "ko": "열 제목"},
    "table.rows": {"en": "row numbers", "ko": "행 번호"},
    "status.line": {"en": "Step status", "ko": "단계 상태"},
    "step": {"en": "Step {n} of 7: {name}", "ko": "7단계 중 {n}단계: {name}"},
    # page 0
    "start.name": {"en": "What to diagnose", "ko": "진단할 대상"},
    "start.sub": {
        "en": "ONNX Runtime can fall back to the CPU silently. Pick the application to check; "
        "the next pages check its configuration, its log and each layer of the GPU stack.",
        "ko": "ONNX Runtime은 조용히 CPU로 전환될 수 있습니다. 점검할 애플리케이션을 고르세요. "
        "다음 페이지들에서 설정, 로그, GPU 스택의 각 계층을 차례로 점검합니다.",
    },
    "start.bareun": {"en": "A Bareun installation", "ko": "Bareun 설치본"},
    "start.bareun.found": {"en": "Found on this machine:", "ko": "이 컴퓨터에서 찾은 설치본:"},
    "start.bareun.none": {
        "en": "No Bareun installation was found (BAREUN_ROOT, /opt/bareun, /bareun): choose its folder.",
        "ko": "Bareun 설치본을 찾지 못했습니다(BAREUN_ROOT, /opt/bareun, /bareun). 폴더를 직접 고르세요.",
    },
    "start.bareun.searching": {"en": "Looking for Bareun installations…", "ko": "Bareun 설치본을 찾는 중…"},
    "start.python": {
        "en": "Another ONNX Runtime application (its Python interpreter or virtual environment)",
        "ko": "다른 ONNX Runtime 애플리케이션(해당 Python 인터프리터 또는 가상 환경)",
    },
    "start.log": {"en": "A log file only", "ko": "로그 파일만"},
    "start.paste": {"en": "Log text pasted here", "ko": "여기에 붙여 넣은 로그 텍스트"},
    "start.paste.hint": {
        "en": "Paste the application's log here (the lines around the start-up are enough)",
        "ko": "애플리케이션 로그를 여기에 붙여 넣으세요(시작 부분 전후의 줄이면 충분합니다)",
    },
    "start.bundle": {"en": "Open a diagnostic bundle (.zip)", "ko": "진단 번들(.zip) 열기"},
    "start.browse": {"en": "Browse…", "ko": "찾아보기…"},
    "start.folder": {"en": "Installation folder", "ko": "설치 폴더"},
    "start.interpreter": {"en": "Python interpreter", "ko": "Python 인터프리터"},
    "start.logfile": {"en": "Log file", "ko": "로그 파일"},
    "start.bundlefile": {"en": "Bundle file", "ko": "번들 파일"},
    "start.missing": {"en": "Fill in the path first: {what}", "ko": "먼저 경로를 입력하세요: {what}"},
    "start.not_found": {"en": "Not found: {path}", "ko": "찾을 수 없습니다: {path}"},
    # running
    "run.diagnosing": {"en": "Inspecting the GPU stack…", "ko": "GPU 스택을 점검하는 중…"},
    "run.collecting": {"en": "Collecting: {what}", "ko": "수집 중: {what}"},
    "run.again": {"en": "Run this step again", "ko": "이 단계 다시 실행"},
    "run.failed": {
        "en": "This step could not run: {message}",
        "ko": "이 단계를 실행하지 못했습니다: {message}",
    },
    "run.cancelled": {
        "en": "Stopped. Press \u201cRun this step again\u201d to start it over.",
        "ko": "중지했습니다. 다시 시작하려면 \u201c이 단계 다시 실행\u201d을 누르세요.",
    },
    "run.elapsed": {"en": "{what} ({seconds:.0f} s)", "ko": "{what} ({seconds:.0f}초)"},
    "run.bundle": {
        "en": "Shown from the bundle (diagnosed on another machine); nothing is run here.",
        "ko": "번들 내용을 보여 줍니다(다른 컴퓨터에서 진단함). 여기서는 아무것도 실행하지 않습니다.",
    },
    # page 1
    "config.name": {"en": "Check the configuration", "ko": "설정 확인"},
    "config.sub": {
        "en": "The setting that decides CPU or GPU is highlighted. \u201ccpu\u201d here answers the question at once.",  # noqa: E501
        "ko": "CPU/GPU를 결정하는 설정이 강조 표시됩니다. 여기 값이 \u201ccpu\u201d이면 원인은 바로 그것입니다.",  # noqa: E501
    },
    "config.file": {"en": "Configuration file: {path}", "ko": "설정 파일: {path}"},
    "config.none": {
        "en": "There is no configuration file for this kind of target (a Python application or a log): "
        "nothing to check here. Go on to the log.",
        "ko": "이런 종류의 대상(Python 애플리케이션 또는 로그)에는 설정 파일이 없어 여기서 점검할 것이 "
        "없습니다. 다음 단계로 넘어가세요.",
    },
    "config.provider": {
        "en": "executionProvider = {value} (line {line})",
        "ko": "executionProvider = {value} ({line}번째 줄)",
    },
    "config.provider.none": {
        "en": "executionProvider is not set in this file.",
        "ko": "이 파일에는 executionProvider가 설정되어 있지 않습니다.",
    },
    "config.wants_cpu": {
        "en": "The configuration asks for the CPU: the application does what it was told. To use the GPU, "
        "set executionProvider to \u201ccuda\u201d (or \u201cgpu\u201d) and restart the server.",
        "ko": "설정이 CPU를 요청하고 있습니다. 애플리케이션은 설정대로 동작하는 것입니다. GPU를 쓰려면 "
        "executionProvider를 \u201ccuda\u201d(또는 \u201cgpu\u201d)로 바꾸고 서버를 다시 시작하세요.",
    },
    "config.libpath": {"en": "libPath = {path}", "ko": "libPath = {path}"},
    "config.text.name": {"en": "The configuration file", "ko": "설정 파일 내용"},
    "config.text.missing": {
        "en": "The file's text is not in this report (it could not be read, or the report is older).",
        "ko": "이 보고서에는 파일 내용이 없습니다(읽을 수 없었거나 이전 형식의 보고서입니다).",
    },
    "config.legend": {
        "en": "Highlighted: the keys that matter (executionProvider, libPath, logPath, modelPath, "
        "licenseFile). \u2716/\u26a0 in the margin: a line a finding points at.",
        "ko": "강조 표시: 중요한 키(executionProvider, libPath, logPath, modelPath, licenseFile). "
        "왼쪽의 \u2716/\u26a0: 문제가 발견된 줄.",
    },
    "config.ok": {"en": "No problem found in the configuration.", "ko": "설정에서 문제를 찾지 못했습니다."},
    # page 2
    "log.name": {"en": "Read the log", "ko": "로그 읽기"},
    "log.sub": {
        "en": "The lines that decide it, from the application's own log, with what they mean.",
        "ko": "애플리케이션 로그에서 결정적인 줄과 그 의미를 보여 줍니다.",
    },
    "log.none": {
        "en": "No log was read for this target. Give a log file on the first page to see its decisive lines.",
        "ko": "이 대상에 대해 읽은 로그가 없습니다. 첫 페이지에서 로그 파일을 지정하면 결정적인 줄을 볼 수 있습니다.",  # noqa: E501
    },
    "log.sources": {"en": "Read: {files} ({lines} lines)", "ko": "읽은 파일: {files} ({lines}줄)"},
    "log.no_lines": {
        "en": "The log has no line about the GPU or a fallback.",
        "ko": "로그에 GPU나 CPU 전환에 관한 줄이 없습니다.",
    },
    "log.cause": {
        "en": "Likely cause from the log: {cause} (confidence {confidence:.0%})",
        "ko": "로그로 본 유력한 원인: {cause} (신뢰도 {confidence:.0%})",
    },
    "log.role.cause": {"en": "cause", "ko": "원인"},
    "log.role.fallback": {"en": "fallback", "ko": "CPU 전환"},
    "log.role.context": {"en": "context", "ko": "관련"},
    "log.role.startup": {"en": "start-up", "ko": "시작"},
    "log.role.hidden": {"en": "hidden", "ko": "숨겨짐"},
    # page 3
    "stack.name": {"en": "Inspect the stack", "ko": "스택 점검"},
    "stack.sub": {
        "en": "Each layer needs the one below it. Select a layer to see what was found and the evidence.",
        "ko": "각 계층은 아래 계층이 있어야 동작합니다. 계층을 선택하면 발견 내용과 근거를 볼 수 있습니다.",
    },
    "layer.driver": {"en": "GPU driver", "ko": "GPU 드라이버"},
    "layer.cuda": {"en": "CUDA runtime", "ko": "CUDA 런타임"},
    "layer.cudnn": {"en": "cuDNN", "ko": "cuDNN"},
    "layer.onnxruntime": {"en": "ONNX Runtime", "ko": "ONNX Runtime"},
    "layer.application": {"en": "The application", "ko": "애플리케이션"},
    "status.ok": {"en": "OK", "ko": "정상"},
    "status.error": {"en": "BROKEN", "ko": "문제 있음"},
    "status.warning": {"en": "WARNING", "ko": "경고"},
    "status.info": {"en": "note", "ko": "참고"},
    "status.unknown": {"en": "not checked", "ko": "확인 안 됨"},
    "stack.version": {"en": "found: {version}", "ko": "발견: {version}"},
    "stack.needed": {"en": "needs: {needed}", "ko": "필요: {needed}"},
    "stack.unknown": {"en": "?", "ko": "?"},
    "stack.libraries": {"en": "Libraries", "ko": "라이브러리"},
    "stack.missing": {"en": "not found", "ko": "찾을 수 없음"},
    "stack.findings": {"en": "Findings", "ko": "발견 사항"},
    "stack.facts": {"en": "Facts", "ko": "확인된 사실"},
    "stack.clean": {
        "en": "Nothing wrong was found in this layer.",
        "ko": "이 계층에서는 문제를 찾지 못했습니다.",
    },
    "stack.select": {"en": "Select a layer on the left.", "ko": "왼쪽에서 계층을 선택하세요."},
    # page 4
    "cpu.name": {"en": "CPU baseline", "ko": "CPU 기준 측정"},
    "cpu.sub": {
        "en": "A small test model runs on the CPU with the application's own ONNX Runtime, in a separate process.",  # noqa: E501
        "ko": "애플리케이션의 ONNX Runtime으로 작은 테스트 모델을 별도 프로세스에서 CPU로 실행합니다.",
    },
    "cpu.running": {"en": "Running the test model on the CPU…", "ko": "테스트 모델을 CPU에서 실행하는 중…"},
    "cpu.done": {
        "en": "CPU baseline measured: {runs} timed runs of {model}.",
        "ko": "CPU 기준 측정 완료: {model}을(를) {runs}회 측정했습니다.",
    },
    "cpu.failed": {
        "en": "The CPU baseline did not run: {why}",
        "ko": "CPU 기준 측정이 실행되지 않았습니다: {why}",
    },
    "table.metric": {"en": "Measure", "ko": "항목"},
    "table.cpu": {"en": "CPU baseline", "ko": "CPU 기준"},
    "table.gpu": {"en": "GPU retry", "ko": "GPU 재시도"},
    "table.p50": {"en": "median latency (p50)", "ko": "중앙값 지연(p50)"},
    "table.p95": {"en": "p95 latency", "ko": "p95 지연"},
    "table.p99": {"en": "p99 latency", "ko": "p99 지연"},
    "table.mean": {"en": "mean latency", "ko": "평균 지연"},
    "table.rate": {"en": "batches per second", "ko": "초당 배치 수"},
    "table.providers": {"en": "providers active", "ko": "활성 프로바이더"},
    "table.nodes": {"en": "nodes per provider", "ko": "프로바이더별 노드 수"},
    "table.speedup": {"en": "speed-up over the CPU", "ko": "CPU 대비 속도 향상"},
    "table.speedup_none": {"en": "none: both ran on the CPU", "ko": "없음: 둘 다 CPU에서 실행됨"},
    "table.equal": {"en": "outputs equal to the CPU's", "ko": "CPU 결과와 출력 일치"},
    "yes": {"en": "yes", "ko": "예"},
    "no": {"en": "NO", "ko": "아니요"},
    "ms": {"en": "{value:.1f} ms", "ko": "{value:.1f} ms"},
    # page 5
    "gpu.name": {"en": "Retry on the GPU", "ko": "GPU에서 재시도"},
    "gpu.sub": {
        "en": "The same model is asked to run on the GPU. A fallback shows at a glance: the CPU busy, the GPU idle.",  # noqa: E501
        "ko": "같은 모델을 GPU에서 실행하도록 요청합니다. CPU 전환은 한눈에 보입니다: CPU는 바쁘고 GPU는 쉽니다.",  # noqa: E501
    },
    "gpu.running": {"en": "Running the test model on the GPU…", "ko": "테스트 모델을 GPU에서 실행하는 중…"},
    "gpu.no_nvml": {
        "en": "No GPU readings on this machine, so no GPU graph is drawn (an empty graph would look like an "
        "idle GPU).\n{why}",
        "ko": "이 컴퓨터에서는 GPU 측정값을 읽을 수 없어 GPU 그래프를 그리지 않습니다(빈 그래프는 GPU가 "
        "쉬는 것처럼 보이기 때문입니다).\n{why}",
    },
    "gpu.replayed": {
        "en": "GPU readings replayed from a recording, not measured here: {what}",
        "ko": "GPU 측정값은 여기서 잰 것이 아니라 기록을 재생한 것입니다: {what}",
    },
    "gpu.waiting": {
        "en": "The graph appears when the GPU retry runs.",
        "ko": "GPU 재시도를 실행하면 그래프가 나타납니다.",
    },
    "plot.gpu": {"en": "GPU utilization (%)", "ko": "GPU 사용률(%)"},
    "plot.memory": {"en": "GPU memory used (MiB)", "ko": "GPU 메모리 사용량(MiB)"},
    "plot.cpu": {"en": "probe CPU (% of one core)", "ko": "프로브 CPU(코어 1개 기준 %)"},
    "plot.phases": {"en": "Probe phases (dotted lines): {phases}", "ko": "프로브 단계(점선): {phases}"},
    "plot.time": {"en": "seconds", "ko": "초"},
    "gpu.verdict.gpu_verified": {
        "en": "The test inference ran on the GPU.",
        "ko": "테스트 추론이 GPU에서 실행되었습니다.",
    },
    "gpu.verdict.fallback": {
        "en": "FELL BACK TO THE CPU: ONNX Runtime was asked for the GPU and ran on the CPU.",
        "ko": "CPU로 전환됨: ONNX Runtime에 GPU를 요청했지만 CPU에서 실행되었습니다.",
    },
    "gpu.verdict.other": {"en": "Result of the GPU retry: {verdict}", "ko": "GPU 재시도 결과: {verdict}"},
    "gpu.cause": {"en": "Why: {cause}", "ko": "원인: {cause}"},
    "gpu.strategies": {"en": "What was tried", "ko": "시도한 방법"},
    "strategy.as_is": {"en": "as the application runs", "ko": "애플리케이션 그대로"},
    "strategy.preload_dlls": {
        "en": "with onnxruntime.preload_dlls()",
        "ko": "onnxruntime.preload_dlls() 사용",
    },
    "strategy.lib_path_first": {"en": "library folders first", "ko": "라이브러리 폴더 우선"},
    "strategy.skipped": {"en": "skipped: {why}", "ko": "건너뜀: {why}"},
    # page 6
    "diag.name": {"en": "Diagnosis", "ko": "진단 결과"},
    "diag.sub": {
        "en": "The most likely cause first. Each finding says what is wrong, the exact fix, and how to check it.",  # noqa: E501
        "ko": "가장 유력한 원인부터 보여 줍니다. 각 항목에 무엇이 잘못되었는지, 정확한 해결 방법, 확인 방법이 있습니다.",  # noqa: E501
    },
    "diag.none": {"en": "No problem was found.", "ko": "문제를 찾지 못했습니다."},
    "diag.cause": {"en": "What is wrong", "ko": "무엇이 잘못되었나"},
    "diag.fix": {"en": "The fix", "ko": "해결 방법"},
    "diag.commands": {"en": "Commands", "ko": "명령"},
    "diag.verify": {"en": "How to verify", "ko": "확인 방법"},
    "diag.evidence": {"en": "Evidence", "ko": "근거"},
    "diag.copy": {"en": "Copy the fix", "ko": "해결 방법 복사"},
    "diag.copied": {"en": "Copied to the clipboard.", "ko": "클립보드에 복사했습니다."},
    "diag.again": {"en": "Check again", "ko": "다시 확인"},
    "diag.again.tip": {
        "en": "After applying the fix: re-run what the fix touches and see whether the finding is gone",
        "ko": "해결 방법을 적용한 뒤: 관련 점검을 다시 실행해 문제가 사라졌는지 확인합니다",
    },
    "diag.again.gone": {
        "en": "Checked again: this finding is gone.",
        "ko": "다시 확인함: 이 문제는 해결되었습니다.",
    },
    "diag.again.still": {
        "en": "Checked again: the finding is still there.",
        "ko": "다시 확인함: 문제가 아직 남아 있습니다.",
    },
    "diag.export": {"en": "Export a bundle…", "ko": "번들 내보내기…"},
    "diag.export.tip": {
        "en": "Save the report, with private details masked, as a .zip to send to support",
        "ko": "개인 정보를 가린 보고서를 지원팀에 보낼 .zip 파일로 저장합니다",
    },
    "diag.export.done": {"en": "Bundle saved: {path}", "ko": "번들을 저장했습니다: {path}"},
    "diag.export.unavailable": {
        "en": "Exporting a bundle is not available in this build.",
        "ko": "이 빌드에서는 번들 내보내기를 사용할 수 없습니다.",
    },
    "diag.verify.english": {"en": "How to verify", "ko": "확인 방법 (영어 원문, 한국어 번역 없음)"},
    "diag.commands.english": {"en": "Commands", "ko": "명령 (주석은 영어 원문)"},
    # how far a GPU attempt got (core/inference/result.py Stage)
    "stage.nothing": {"en": "ONNX Runtime did not even load", "ko": "ONNX Runtime조차 로드되지 않음"},
    "stage.runtime_loaded": {
        "en": "ONNX Runtime loaded, the GPU provider's libraries did not",
        "ko": "ONNX Runtime은 로드되었으나 GPU 공급자 라이브러리는 로드되지 않음",
    },
    "stage.libraries_loaded": {
        "en": "the GPU provider's libraries loaded, the provider was not created",
        "ko": "GPU 공급자 라이브러리는 로드되었으나 공급자가 생성되지 않음",
    },
    "stage.provider_created": {
        "en": "the GPU provider was created, no session",
        "ko": "GPU 공급자는 생성되었으나 세션은 만들어지지 않음",
    },
    "stage.session_created": {
        "en": "a GPU session was created (no inference on the GPU yet)",
        "ko": "GPU 세션이 생성됨(아직 GPU에서 추론하지 않음)",
    },
    "stage.inference_on_gpu": {"en": "inference ran on the GPU", "ko": "GPU에서 추론이 실행됨"},
    # a bundle opened from another machine
    "bundle.banner": {
        "en": "BUNDLE FROM ANOTHER MACHINE: {name}, made {created} by fallback-doctor {version} "
        "({redacted}). "
        "Every page shows what was diagnosed there; nothing is run on this machine.",
        "ko": "다른 컴퓨터에서 만든 번들: {name}, {created}에 fallback-doctor {version}로 생성({redacted}). "
        "모든 페이지는 그곳에서 진단한 내용이며, 이 컴퓨터에서는 아무것도 실행하지 않습니다.",
    },
    "bundle.redacted": {"en": "private details masked", "ko": "개인 정보 가림"},
    "bundle.not_redacted": {"en": "NOT redacted", "ko": "가리지 않음"},
    "bundle.integrity": {
        "en": "Warning: some files do not match the bundle's manifest: {problems}",
        "ko": "경고: 일부 파일이 번들의 매니페스트와 일치하지 않습니다: {problems}",
    },
    "bundle.samples": {
        "en": "samples.csv of the bundle (recorded on the other machine)",
        "ko": "번들의 samples.csv(다른 컴퓨터에서 기록)",
    },
    # the bundle preview (export)
    "preview.title": {"en": "Export a diagnostic bundle", "ko": "진단 번들 내보내기"},
    "preview.intro": {
        "en": "Nothing is written yet. Check every file below: highlighted text will be masked "
        "(hover a highlight to see what kind it is). Untick a file to leave it out.",
        "ko": "아직 아무것도 저장하지 않았습니다. 아래 파일을 모두 확인하세요. 강조된 부분은 가려집니다"
        "(강조 부분에 마우스를 올리면 종류가 보입니다). 빼려는 파일은 체크를 해제하세요.",
    },
    "preview.preparing": {"en": "Preparing the preview…", "ko": "미리 보기를 준비하는 중…"},
    "preview.members": {"en": "Files in the bundle", "ko": "번들에 들어갈 파일"},
    "preview.members.tip": {
        "en": "Ticked files are written; untick one to leave it out",
        "ko": "체크된 파일만 저장됩니다. 빼려면 체크를 해제하세요",
    },
    "preview.member": {"en": "{name} ({count} masked)", "ko": "{name} ({count}곳 가림)"},
    "preview.member.derived": {"en": "{name} (made from the others)", "ko": "{name} (다른 파일로 생성)"},
    "preview.member.note": {
        "en": "{count} masked in this file. Read from: {source}",
        "ko": "이 파일에서 {count}곳을 가립니다. 읽은 위치: {source}",
    },
    "preview.member.derived.note": {
        "en": "Made from the files above after masking; it has no masks of its own.",
        "ko": "가린 뒤의 위 파일들로 만들어지므로 따로 가릴 부분이 없습니다.",
    },
    "preview.required": {
        "en": "The report cannot be left out: a bundle without it cannot be opened",
        "ko": "보고서는 뺄 수 없습니다. 보고서가 없으면 번들을 열 수 없습니다",
    },
    "preview.excluded": {
        "en": "LEFT OUT: this file will not be written.",
        "ko": "제외됨: 이 파일은 저장하지 않습니다.",
    },
    "preview.truncated": {
        "en": "(showing the first {shown} of {total} characters; all of it is masked the same way)",
        "ko": "(전체 {total}자 중 처음 {shown}자만 표시합니다. 나머지도 같은 방식으로 가립니다)",
    },
    "preview.hover": {"en": "{kind}: replaced by {replacement}", "ko": "{kind}: {replacement}(으)로 바뀜"},
    "preview.summary": {
        "en": "{files} files will be written, {redactions} values masked ({kinds}).",
        "ko": "파일 {files}개를 저장하고 값 {redactions}곳을 가립니다({kinds}).",
    },
    "preview.unredacted": {
        "en": "MASKING IS OFF: secrets, user and host names go out as they are; the manifest says so.",
        "ko": "가리기 꺼짐: 비밀 값, 사용자 및 호스트 이름이 그대로 나갑니다. 매니페스트에 기록됩니다.",
    },
    "preview.cut": {"en": "Cut: {name}: {why}", "ko": "잘림: {name}: {why}"},
    "preview.more": {
        "en": "Mask more (any text to hide everywhere):",
        "ko": "추가로 가리기(모든 곳에서 숨길 텍스트):",
    },
    "preview.more.hint": {
        "en": "e.g. a customer name or a server name",
        "ko": "예: 고객사 이름 또는 서버 이름",
    },
    "preview.more.add": {"en": "Mask", "ko": "가리기"},
    "preview.more.list": {"en": "Texts masked on request", "ko": "요청으로 가린 텍스트"},
    "preview.more.remove": {"en": "Stop masking the selected text", "ko": "선택한 텍스트 가리기 취소"},
    "preview.redact": {"en": "Mask private details (recommended)", "ko": "개인 정보 가리기(권장)"},
    "preview.off.title": {"en": "Turn masking off?", "ko": "가리기를 끌까요?"},
    "preview.off.text": {
        "en": "The bundle will contain passwords, keys, user names, host names and addresses exactly as "
        "they are on this machine. Its manifest will say that it was not redacted. Turn masking off?",
        "ko": "번들에 이 컴퓨터의 비밀번호, 키, 사용자 이름, 호스트 이름, 주소가 그대로 들어갑니다. "
        "매니페스트에는 가리지 않았다고 기록됩니다. 가리기를 끌까요?",
    },
    "preview.as_written": {"en": "Show as it will be written", "ko": "저장될 모습으로 보기"},
    "preview.text": {"en": "The selected file's text", "ko": "선택한 파일의 내용"},
    "preview.save": {"en": "Save the bundle…", "ko": "번들 저장…"},
    "preview.cancel": {"en": "Cancel", "ko": "취소"},
    "preview.writing": {"en": "Writing the bundle…", "ko": "번들을 저장하는 중…"},
    "preview.exists.title": {"en": "Replace the file?", "ko": "파일을 바꿀까요?"},
    "preview.exists.text": {
        "en": "{path} already exists. Replace it with this bundle?",
        "ko": "{path} 파일이 이미 있습니다. 이 번들로 바꿀까요?",
    },
    "preview.not_saved": {
        "en": "Not saved: the existing file is kept.",
        "ko": "저장하지 않았습니다. 기존 파일을 유지합니다.",
    },
    "severity.error": {"en": "ERROR", "ko": "오류"},
    "severity.warning": {"en": "WARNING", "ko": "경고"},
    "severity.info": {"en": "NOTE", "ko": "참고"},
}


_current = {"lang": "en"}


def system_language() -> str:
    """ "ko" when the locale is Korean, else "en" (the same rule as the CLI's, in core/texts.py)."""
    from fallback_doctor.core.texts import system_language as rule

    return rule()


def set_language(lang: str) -> None:
    """Switch the wizard's words (the caller re-renders the pages)."""
    _current["lang"] = lang if lang in LANGUAGES else "en"


def language() -> str:
    """The current language: "en" or "ko"."""
    return _current["lang"]


def t(key: str, **params: object) -> str:
    """The label ``key`` in the current language, with ``params`` filled in."""
    entry = LABELS[key]
    text = entry.get(_current["lang"]) or entry["en"]
    return text.format(**params) if params else text
