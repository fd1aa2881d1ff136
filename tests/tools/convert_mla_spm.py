#!/usr/bin/env python3
"""llama.cpp e21cdc11's convert_hf_to_gguf.py with the one override the
fixtures' tools/ref/convert_upstream.py documents (set_vocab tries
SentencePiece first, as upstream's Qwen2Model does), applied to
DeepseekV2Model and to Glm4MoeLiteModel, which defines its own set_vocab
(_set_vocab_glm: tokenizer.json through transformers) and so escapes
convert_upstream.py's override. Everything but the tokenizer.* keys is the
upstream script's own output.
Usage: convert_mla_spm.py CONVERT_HF_TO_GGUF.PY [converter args...]"""
import importlib.util, sys

path = sys.argv[1]
sys.argv = [path] + sys.argv[2:]
spec = importlib.util.spec_from_file_location("convert_hf_to_gguf", path)
C = importlib.util.module_from_spec(spec)
sys.modules["convert_hf_to_gguf"] = C
spec.loader.exec_module(C)


def spm_first(orig):
    def set_vocab(self):
        try:
            self._set_vocab_sentencepiece()
        except FileNotFoundError:
            orig(self)
    return set_vocab


for cls in ("DeepseekV2Model", "Glm4MoeLiteModel"):
    k = getattr(C, cls)
    k.set_vocab = spm_first(k.set_vocab)
C.main()
