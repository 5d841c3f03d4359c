"""Facts about the target application: its profile, configuration and libPath."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ConfigIssue:
    """Something wrong in the configuration file, and exactly where it is."""

    code: str
    """What is wrong, the finding id after "config.": malformed, not_utf8, bom, not_object,
    wrong_type.<string|integer|bool|object|address|provider>, bad_value.<range|minimum|empty|workspace>,
    provider_unknown, provider_unknown.suggest, provider_case, provider_missing, provider_not_set,
    path_missing, path_missing.<key>, not_a_directory, not_a_file, undefined_variable, duplicate_key,
    config_missing, unreadable."""
    severity: str
    """"error", "warning" or "info"."""
    key: str | None
    """The dotted key ("executionProvider.provider", "address.port"); None for the whole file."""
    line: int
    """1-based; where the key is written (or where the file breaks)."""
    column: int
    """1-based, in characters."""
    message: str
    """English, one sentence: what is wrong ("expected an integer, found a string")."""
    value: str | None = None
    """The value as written (JSON text, shortened), or the expanded path."""
    line_text: str = ""
    """The line of the file, as written (for quoting)."""
    params: dict[str, str] = field(default_factory=dict)
    """The fields of the finding's texts (key, expected, minimum, path …), language-neutral."""
    value_column: int | None = None
    """Where the value itself starts on the key's line (None when it is on another line)."""


@dataclass(frozen=True)
class ProviderSetting:
    """The executionProvider setting as written: its form, its value, where it is."""

    form: str
    """"string" ("gpu"), "object" ({"provider": "cuda"}), or "absent"."""
    raw: str | None
    """The value as written in the file (JSON text, shortened)."""
    provider: str | None
    """The provider, lower-cased: "gpu", "cpu", "cuda", "tensorrt", … None when unreadable."""
    line: int | None
    column: int | None
    line_text: str = ""


@dataclass(frozen=True)
class LibPathOrt:
    """The ONNX Runtime in an application's own library folder (Bareun's libPath)."""

    directory: str
    core_library: str | None
    """libonnxruntime.so.X.Y.Z / onnxruntime.dll / libonnxruntime.X.Y.Z.dylib, None where none is there."""
    version: str | None
    version_source: str | None
    """"C API" (OrtGetApiBase()->GetVersionString() in a child process) or "file name"."""
    provider_libraries: tuple[str, ...]
    """Paths of every libonnxruntime_providers_*.so / onnxruntime_providers_*.dll in the folder."""
    gpu_providers: tuple[str, ...]
    """Execution providers whose library is present: CUDAExecutionProvider, TensorrtExecutionProvider …"""
    load_error: str | None = None
    """Why the child could not read the version from the library itself, where it could not."""


@dataclass(frozen=True)
class RunningProcess:
    """The running process ``--pid`` names, as the target: whose interpreter, folder and environment."""

    pid: int
    executable: str | None
    """/proc/PID/exe (a virtual environment's interpreter resolves to its base interpreter here)."""
    argv: tuple[str, ...] = ()
    cwd: str | None = None
    """/proc/PID/cwd: the folder relative paths of the application start from."""
    is_python: bool = False
    """A Python interpreter runs it (the executable's name, or libpython mapped)."""
    interpreter: str | None = None
    """The interpreter that runs the application's own environment (``<venv>/bin/python``)."""
    prefix: str | None = None
    """Its ``sys.prefix`` (the virtual environment's folder), as found."""
    found_by: str | None = None
    """How the interpreter was found: "maps" (site-packages mapped), "virtual_env" (VIRTUAL_ENV of the
    process), "argv" (its command line), "exe" (/proc/PID/exe)."""
    environment_read: bool = False
    """Whether /proc/PID/environ could be read (the probes then run with the process's own)."""
    environment_error: str | None = None
    """Why it could not be read."""
    output_files: tuple[str, ...] = ()
    """The regular files its standard output and error are written to (/proc/PID/fd/1 and 2): a
    service's own log, where ONNX Runtime's warnings and its Python binding's fallback lines go."""


@dataclass(frozen=True)
class TargetFacts:
    """The resolved target: which application, where its files are, what its configuration says."""

    kind: str
    """The profile's kind: "bareun", "python", "native", "log" (core/readers/targets/registry.py has them
    all)."""
    root: str | None
    """The installation directory (Bareun: BAREUN_ROOT), None for a Python or log target."""
    config_path: str | None
    log_paths: tuple[str, ...]
    """Log files to read: those named with --log, else (Bareun) the files in logPath, newest first."""
    lib_path: str | None
    """The application's own ONNX Runtime directory (Bareun's libPath, expanded), None where it has none."""
    requested_provider: str | None
    """What the configuration asks for: "gpu", "cuda", "tensorrt", "cpu", … None when unknown."""
    root_source: str | None = None
    """How the root was found: "--bareun-root", "BAREUN_ROOT", "default location", "--config"."""
    python: str | None = None
    """The application's interpreter (a Python target, or --python given with another target)."""
    pid: int | None = None
    """--pid as given (the process is found by the process collector)."""
    provider_setting: ProviderSetting | None = None
    config_issues: tuple[ConfigIssue, ...] = ()
    paths: dict[str, str] = field(default_factory=dict)
    """The configuration's path settings, ${VAR} expanded and made absolute: key -> path."""
    log_dir: str | None = None
    """The log directory the configuration names (Bareun's logPath), expanded."""
    lib_ort: LibPathOrt | None = None
    log_text: str | None = None
    """Log text pasted into the wizard (no file)."""
    notes: tuple[str, ...] = ()
    """Things a person should know about how the target was read (a default that was assumed)."""
    config_text: str | None = None
    """The configuration file's text as read (decoded; at most CONFIG_TEXT_LIMIT characters, a note
    says when it was cut), so a page can show the file itself; None where there is no file."""
    app: str | None = None
    """A native target's kind of application ("node", "dotnet", "java", "rust", "c"): its remedies."""
    config_key_lines: dict[str, int] = field(default_factory=dict)
    """Where the keys that matter are written (executionProvider, libPath, logPath, modelPath,
    licenseFile): key -> 1-based line in ``config_text``."""
    process: RunningProcess | None = None
    """The running process ``--pid`` names: its interpreter, working folder and environment."""

    @property
    def wants_cpu(self) -> bool:
        """True when the configuration asks for the CPU: then the CPU is what was asked for."""
        return self.requested_provider == "cpu"
