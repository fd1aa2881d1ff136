"""Runs llama.cpp's convert_hf_to_gguf.py (argv[1]) unchanged on the rest
of the command line; with TOKPRE set, get_vocab_base_pre returns it (a
tokenizer trained here has no released model's chkhsh). See
tests/data/tok/README.md."""
import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location("convert_hf_to_gguf", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
sys.modules["convert_hf_to_gguf"] = mod
spec.loader.exec_module(mod)
if os.environ.get("TOKPRE"):
    mod.TextModel.get_vocab_base_pre = lambda self, tokenizer: os.environ["TOKPRE"]
sys.argv = [sys.argv[1]] + sys.argv[2:]
mod.main()
