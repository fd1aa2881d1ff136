#!/usr/bin/env python3
"""qpack_convert.py CONVERT_UPSTREAM.PY CONVERT_HF_TO_GGUF.PY [converter args...]

Runs llama.cpp e21cdc11's converter (through the fixtures' convert_upstream.py) on a
compressed-tensors or GPTQ checkpoint under Debian's torch 1.13, which lacks two torch-2
features ModelBase.dequant_model's GPTQ branch uses. The converter's source is loaded with
exactly these three expressions swapped for equivalents (same values), as
tests/ref/qpack_upstream.py does for the kernels' cases:

  qweight.dtype.itemsize  →  qweight.element_size()   (dtype.itemsize: torch >= 2.1)
  scales[g_idx]           →  scales[g_idx.long()]     (torch 1.13 indexes with int64 only)
  zeros[g_idx]            →  zeros[g_idx.long()]

Everything else runs unmodified. (tqdm, for the writer's progress bar only, is stubbed when
it is not installed.)"""
import importlib.machinery, importlib.util, runpy, sys, types

try:
    import tqdm  # noqa: F401
except ImportError:
    class _Bar:
        def __init__(self, *a, **k): pass
        def update(self, *a): pass
        def set_description(self, *a): pass
        def reset(self, *a, **k): pass
        def close(self): pass
    sys.modules["tqdm"] = types.SimpleNamespace(tqdm=_Bar)

SWAPS = [("qweight.dtype.itemsize", "qweight.element_size()"),
         ("scales[g_idx]", "scales[g_idx.long()]"),
         ("zeros[g_idx]", "zeros[g_idx.long()]")]


class Patched(importlib.machinery.SourceFileLoader):
    def get_data(self, path):
        src = super().get_data(path).decode()
        for a, b in SWAPS:
            assert src.count(a) == 1, a
            src = src.replace(a, b)
        return src.encode()


_orig = importlib.util.spec_from_file_location


def spec_from_file_location(name, location, *a, **k):
    if name == "convert_hf_to_gguf":
        return _orig(name, location, loader=Patched(name, str(location)))
    return _orig(name, location, *a, **k)


importlib.util.spec_from_file_location = spec_from_file_location
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
