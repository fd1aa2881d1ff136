#!/usr/bin/env python3
"""Reference values for convert/qpack.c from llama.cpp e21cdc11's own
ModelBase.dequant_model (run unmodified on small seeded tensors).

Writes tests/data/qpack/cases.txt: per case a header line, then lines of
hex words: the int32 / float32 inputs and the float32 output bits.

  N=/work/llama-e21 PYTHONPATH=/work/shared/tools/ref/pyshim:$N/gguf-py:$N \
    /usr/bin/python3 tests/ref/qpack_upstream.py > tests/data/qpack/cases.txt
"""
import types
import torch
import inspect
import textwrap
import convert_hf_to_gguf
from convert_hf_to_gguf import ModelBase

# Debian's torch 1.13 has no dtype.itemsize (torch >= 2.1): the one
# expression is swapped for its equivalent element_size(); the rest of
# dequant_model runs as e21cdc11 has it.
_src = textwrap.dedent(inspect.getsource(ModelBase.dequant_model))
assert _src.count("qweight.dtype.itemsize") == 1
_ns = {}
_globals = dict(vars(convert_hf_to_gguf), Tensor=torch.Tensor)
exec(compile(_src.replace("qweight.dtype.itemsize", "qweight.element_size()"), "dequant_model", "exec"),
     _globals, _ns)
dequant_model = _ns["dequant_model"]

g = torch.Generator().manual_seed(28)


def run(qc, tensors):
    fake = types.SimpleNamespace(hparams={"quantization_config": qc}, lazy=False, _is_nvfp4=False,
                                 model_tensors={k: (lambda v=v: v) for k, v in tensors.items()})
    dequant_model(fake)
    return {k: v() for k, v in fake.model_tensors.items()}


def words(t):
    return " ".join("%08x" % (int(x) & 0xffffffff) for x in t.flatten().tolist())


def fbits(t):
    return words(t.float().contiguous().view(torch.int32))


def rint32(*shape):
    return torch.randint(-2**31, 2**31, shape, generator=g, dtype=torch.int64).to(torch.int32)


def ct_case(bits, gs, rows, cols, zero, sdt):
    per = len(range(0, 32 - (bits - 1), bits))
    nw = (cols + per - 1) // per
    t = {"m.weight_packed": rint32(rows, nw),
         "m.weight_shape": torch.tensor([rows, cols], dtype=torch.int64),
         "m.weight_scale": (torch.randn(rows, cols // gs, generator=g) * 0.01).to(sdt)}
    if zero:
        t["m.weight_zero_point"] = rint32((rows + per - 1) // per, cols // gs)
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized",
          "config_groups": {"group_0": {"weights": {"strategy": "group", "type": "int",
                                                    "num_bits": bits, "group_size": gs}}}}
    out = run(qc, t)["m.weight"]
    print("ct %d %d %d %d %d %d" % (bits, gs, rows, cols, nw, int(zero)))
    print(words(t["m.weight_packed"]))
    print(fbits(t["m.weight_scale"]))
    print(words(t["m.weight_zero_point"]) if zero else "-")
    print(fbits(out))


def gptq_case(bits, inn, out_, groups, v2):
    per = 32 // bits
    t = {"m.qweight": rint32(inn // per, out_),
         "m.qzeros": rint32(groups, out_ // per),
         "m.scales": (torch.randn(groups, out_, generator=g) * 0.01).to(torch.float16),
         # int64 here: torch 1.13 indexes with long tensors only (torch 2 takes the
         # checkpoints' int32 as well, same values); written as int32 words
         "m.g_idx": torch.randint(0, groups, (inn,), generator=g, dtype=torch.int64)}
    qc = {"quant_method": "gptq", "bits": bits}
    if v2:
        qc["checkpoint_format"] = "gptq_v2"
    w = run(qc, t)["m.weight"]
    print("gptq %d %d %d %d %d" % (bits, inn, out_, groups, int(v2)))
    print(words(t["m.qweight"]))
    print(words(t["m.qzeros"]))
    print(fbits(t["m.scales"]))
    print(words(t["m.g_idx"]))
    print(fbits(w))


def bitnet_case(prows, cols, sdt, sshape):
    # uint8 weight, one (inverse) factor; every byte value likely over the cases
    t = {"m.weight": torch.randint(0, 256, (prows, cols), generator=g, dtype=torch.int64).to(torch.uint8),
         "m.weight_scale": (torch.rand(sshape, generator=g) * 40 + 0.5).to(sdt)}
    w = run({"quant_method": "bitnet"}, t)["m.weight"]
    assert "m.weight_scale" not in run({"quant_method": "bitnet"}, t)
    print("bitnet %d %d" % (prows, cols))
    print(words(t["m.weight"].to(torch.int64)))
    print(fbits(t["m.weight_scale"]))
    print(fbits(w))


ct_case(4, 8, 5, 16, False, torch.bfloat16)
ct_case(4, 8, 5, 16, True, torch.bfloat16)
ct_case(8, 4, 3, 12, True, torch.float16)
ct_case(8, 12, 4, 12, False, torch.float32)
ct_case(4, 4, 9, 12, True, torch.float32)
gptq_case(4, 16, 16, 2, False)
gptq_case(8, 8, 8, 3, False)
gptq_case(4, 16, 8, 4, True)
gptq_case(2, 32, 16, 2, False)
bitnet_case(3, 16, torch.bfloat16, (1,))
bitnet_case(5, 7, torch.float16, (1,))
bitnet_case(2, 32, torch.float32, ())
