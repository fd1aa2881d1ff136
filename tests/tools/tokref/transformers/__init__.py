"""A stand-in for transformers, enough for llama.cpp's convert_hf_to_gguf.py
to read a vocabulary from tokenizer.json + tokenizer_config.json (see
tests/data/tok/README.md). AutoConfig raises, so the converter reads
config.json itself."""
import json
import os


class AutoConfig:
    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        raise OSError("transformers stand-in: no AutoConfig")


class _Added:
    def __init__(self, d):
        self.content = d["content"]
        self.special = bool(d.get("special", False))
        self.normalized = bool(d.get("normalized", False))

    def __str__(self):
        return self.content


class _FastTokenizer:
    is_fast = True

    def __init__(self, folder):
        with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
            tj = json.load(f)
        cfg = {}
        path = os.path.join(folder, "tokenizer_config.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                cfg = json.load(f)
        model_vocab = tj["model"]["vocab"]
        self.vocab_size = len(model_vocab)
        self.vocab = dict(model_vocab)
        self.added_tokens_decoder = {}
        for a in tj.get("added_tokens", []):
            self.vocab[a["content"]] = a["id"]
            self.added_tokens_decoder[a["id"]] = _Added(a)
        names = []
        for k in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
            v = cfg.get(k)
            v = v.get("content") if isinstance(v, dict) else v
            if isinstance(v, str):
                names.append(v)
        for v in cfg.get("additional_special_tokens", []) or []:
            v = v.get("content") if isinstance(v, dict) else v
            if isinstance(v, str):
                names.append(v)
        self.all_special_tokens = names
        self.all_special_ids = [self.vocab[n] for n in names if n in self.vocab]

    def get_vocab(self):
        return dict(self.vocab)

    def get_added_vocab(self):
        return {a.content: i for i, a in self.added_tokens_decoder.items()}

    def __len__(self):
        return len(self.vocab)

    # decode(encode(t)) == t for the added tokens the converter checks
    def encode(self, text, add_special_tokens=True):
        return [text]

    def decode(self, ids, **kwargs):
        return "".join(ids)


class _KimiTokenizer:
    """What convert_hf_to_gguf.py reads of Kimi K2's TikTokenTokenizer
    (tokenization_kimi.py): model._mergeable_ranks (tiktoken's
    load_tiktoken_bpe) and special_tokens; it has no .vocab, so
    _set_vocab_gpt2 fails as it does on the real one."""

    def __init__(self, folder):
        import base64
        import types
        ranks = {}
        with open(os.path.join(folder, "tiktoken.model"), "rb") as f:
            for line in f.read().splitlines():
                if line:
                    token, rank = line.split()
                    ranks[base64.b64decode(token)] = int(rank)
        self.model = types.SimpleNamespace(_mergeable_ranks=ranks)
        with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        mapping = {int(i): d["content"] for i, d in cfg.get("added_tokens_decoder", {}).items()}
        base = len(ranks)
        self.special_tokens = {mapping.get(i, f"<|reserved_token_{i}|>"): i
                               for i in range(base, base + 256 + 2)}


class AutoTokenizer:
    @classmethod
    def from_pretrained(cls, folder, *args, **kwargs):
        folder = str(folder)
        if not os.path.exists(os.path.join(folder, "tokenizer.json")) and \
                os.path.exists(os.path.join(folder, "tiktoken.model")):
            return _KimiTokenizer(folder)
        return _FastTokenizer(folder)
