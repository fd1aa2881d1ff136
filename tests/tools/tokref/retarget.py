"""retarget.py HOST.gguf VOCAB.gguf OUT.gguf: HOST's metadata (a vocabulary-only
file of an architecture llama-tokenize loads) with every tokenizer.* key
replaced by VOCAB's, in VOCAB's order. llama-tokenize e21cdc11 stops in
llama_model::print_info on a deepseek2 vocabulary-only file; only the
tokenizer.* keys drive its tokenizer (tests/data/tok/README.md)."""
import sys
import gguf
from gguf import GGUFReader, GGUFWriter, GGUFValueType

host, voc, out = sys.argv[1:4]


def copy(w, f):
    t = f.types[0]
    if t == GGUFValueType.ARRAY:
        w.add_array(f.name, f.contents())
    elif t == GGUFValueType.STRING:
        w.add_string(f.name, f.contents())
    else:
        w.add_key_value(f.name, f.contents(), t)


h, v = GGUFReader(host), GGUFReader(voc)
arch = h.fields["general.architecture"].contents()
w = GGUFWriter(out, arch)
for f in h.fields.values():
    if f.name.startswith("GGUF.") or f.name == "general.architecture" or f.name.startswith("tokenizer."):
        continue
    copy(w, f)
for f in v.fields.values():
    if f.name.startswith("tokenizer."):
        copy(w, f)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
