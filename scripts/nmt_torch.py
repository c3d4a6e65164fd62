#!/usr/bin/env python3
"""nmt_torch: a model exported by `nmt export` (one .safetensors file) in PyTorch.

    import nmt_torch
    model = nmt_torch.load("model.safetensors")
    print(model.translate("a source sentence"), model.score("a source sentence", "its reference"))

The export holds the parameters under their registry names (emb.shared, enc.0.self_attn.w_q, ...,
float32, (out, in) shapes), the SentencePiece model as the uint8 tensor "sentencepiece.model", and
in __metadata__ the resolved config as JSON ("nmt_config"), the special ids and the SentencePiece
model's SHA-256. Text goes through the sentencepiece module when it is installed (Debian
python3-sentencepiece); without it, pass and get lists of token ids.

The model is the Transformer of model/, written as functions over a dict of named tensors (no
nn.Transformer): shared tied embeddings scaled by sqrt(D) plus sinusoidal positions, post- or
pre-LN (pre-LN with final LayerNorms), standard multi-head (concat) or collaborative (collab)
attention with either bias form, ReLU feed-forward. scripts/make_reference.py builds the test
fixtures from the same functions. Inference only: no dropout. Greedy decoding follows nmt's
`--beam 1` (PAD and BOS never generated, EOS forced at the length limit
int(max_len_a * (source tokens + 1)) + max_len_b); beam search is not reimplemented.

Run with Debian's interpreter (python3-torch): /usr/bin/python3.
"""
import hashlib
import json
import math
import struct

import torch
import torch.nn.functional as F

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPM_TENSOR = "sentencepiece.model"
FORMAT_VERSION = "1"

# ---- the model as functions of a dict P of named tensors; cfg holds d_model, heads,
# enc_layers and dec_layers; mode is "concat" or "collab", norm "post" or "pre" ----


def positions(T, D):
    """Sinusoidal positions (T, D): sin on even, cos on odd dimensions, computed in double."""
    pe = torch.zeros(T, D, dtype=torch.float64)
    for pos in range(T):
        for i in range(D):
            angle = pos / 10000.0 ** ((i // 2 * 2) / D)
            pe[pos, i] = math.cos(angle) if i % 2 else math.sin(angle)
    return pe.float()


def attention(P, p, xq, xkv, kv_len, causal, cfg, mode):
    """Attention module p: queries from xq (B, Tq, D), keys and values from xkv (B, Tk, D), the
    first kv_len[b] keys visible (and none past the query when causal)."""
    B, Tq, D = xq.shape
    Tk = xkv.shape[1]
    H = cfg["heads"]
    scale = 1.0 / math.sqrt(D // H)
    q = xq @ P[p + ".w_q"].T
    k = xkv @ P[p + ".w_k"].T
    if p + ".b_q" in P:
        q = q + P[p + ".b_q"]
        k = k + P[p + ".b_k"]
    v = (xkv @ P[p + ".w_v"].T + P[p + ".b_v"]).view(B, Tk, H, D // H).transpose(1, 2)
    if mode == "concat":
        dk = q.shape[-1] // H
        qh = q.view(B, Tq, H, dk).transpose(1, 2)
        kh = k.view(B, Tk, H, dk).transpose(1, 2)
        s = (qh @ kh.transpose(-1, -2)) * scale
    else:
        mixed = q.unsqueeze(1) * P[p + ".mix"].view(1, H, 1, -1)      # (B, H, Tq, W)
        s = (mixed @ k.unsqueeze(1).transpose(-1, -2)) * scale          # (B, H, Tq, Tk)
        if p + ".u" in P:
            content = xkv @ P[p + ".u"].T                               # (B, Tk, H)
            s = s + scale * content.transpose(1, 2).unsqueeze(2)
    keys = torch.arange(Tk).view(1, 1, 1, Tk)
    masked = keys >= kv_len.view(B, 1, 1, 1)
    if causal:
        masked = masked | (keys > torch.arange(Tq).view(1, 1, Tq, 1))
    s = s.masked_fill(masked, float("-inf"))
    a = torch.softmax(s, dim=-1)
    o = (a @ v).transpose(1, 2).reshape(B, Tq, D)
    return o @ P[p + ".w_o"].T + P[p + ".b_o"]


def layer_norm(P, p, x):
    return F.layer_norm(x, (x.shape[-1],), P[p + ".g"], P[p + ".b"], eps=1e-5)


def ffn(P, p, x):
    return torch.relu(x @ P[p + ".w_1"].T + P[p + ".b_1"]) @ P[p + ".w_2"].T + P[p + ".b_2"]


def block(P, ln, x, f, norm):
    if norm == "pre":
        return x + f(layer_norm(P, ln, x))
    return layer_norm(P, ln, x + f(x))


def embed(P, ids, D):
    return P["emb.shared"][ids.long()] * math.sqrt(D) + positions(ids.shape[1], D)


def encode(P, cfg, mode, norm, src, src_len):
    """The encoder's output (B, S, D) for src (B, S) ids, EOS included, src_len[b] of them real."""
    x = embed(P, src, cfg["d_model"])
    for l in range(cfg["enc_layers"]):
        x = block(P, f"enc.{l}.ln1", x,
                  lambda h: attention(P, f"enc.{l}.self_attn", h, h, src_len, False, cfg, mode),
                  norm)
        x = block(P, f"enc.{l}.ln2", x, lambda h: ffn(P, f"enc.{l}.ffn", h), norm)
    return layer_norm(P, "enc.final_ln", x) if norm == "pre" else x


def decode(P, cfg, mode, norm, enc, src_len, tgt_in, tgt_len):
    """The logits (B, T, V) of the next token at every position of tgt_in (B, T), BOS first."""
    y = embed(P, tgt_in, cfg["d_model"])
    for l in range(cfg["dec_layers"]):
        y = block(P, f"dec.{l}.ln1", y,
                  lambda h: attention(P, f"dec.{l}.self_attn", h, h, tgt_len, True, cfg, mode),
                  norm)
        y = block(P, f"dec.{l}.ln2", y,
                  lambda h: attention(P, f"dec.{l}.cross_attn", h, enc, src_len, False, cfg, mode),
                  norm)
        y = block(P, f"dec.{l}.ln3", y, lambda h: ffn(P, f"dec.{l}.ffn", h), norm)
    dec = layer_norm(P, "dec.final_ln", y) if norm == "pre" else y
    return dec @ P["emb.shared"].T


def forward(P, cfg, mode, norm, batch):
    """Teacher-forced logits (B, T, V) of a batch: src, tgt_in, src_len, tgt_len."""
    enc = encode(P, cfg, mode, norm, batch["src"], batch["src_len"])
    return decode(P, cfg, mode, norm, enc, batch["src_len"], batch["tgt_in"], batch["tgt_len"])


# ---- the export ----


def read_safetensors(path):
    """The tensors (name -> torch tensor, a copy) and the __metadata__ map of a .safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    dtypes = {"F32": torch.float32, "U8": torch.uint8}
    buf = bytearray(data[8 + n:])
    tensors = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        dt = dtypes[e["dtype"]]
        t = torch.frombuffer(buf, dtype=dt, count=(end - begin) // (4 if dt == torch.float32 else 1),
                             offset=begin)
        tensors[name] = t.reshape(e["shape"]).clone()
    return tensors, meta


class NmtModel(torch.nn.Module):
    """An exported model: .config (the resolved config, a dict of sections), .params (name ->
    nn.Parameter, also registered with '.' as '_'), .sp (a SentencePieceProcessor or None)."""

    def __init__(self, path):
        super().__init__()
        tensors, meta = read_safetensors(path)
        if meta.get("nmt_format_version") != FORMAT_VERSION:
            raise ValueError(f"{path}: not an nmt export of format version {FORMAT_VERSION}")
        self.config = json.loads(meta["nmt_config"])
        m = self.config["model"]
        self.cfg = {k: m[k] for k in ("d_model", "heads", "enc_layers", "dec_layers")}
        self.mode, self.norm = m["attention"], m["norm"]
        spm = tensors.pop(SPM_TENSOR, None)
        self.params = {}
        for name, t in tensors.items():
            self.params[name] = torch.nn.Parameter(t, requires_grad=False)
            self.register_parameter(name.replace(".", "_"), self.params[name])
        self.sp = None
        if spm is not None:
            raw = spm.numpy().tobytes()
            if hashlib.sha256(raw).hexdigest() != meta.get("sentencepiece_sha256"):
                raise ValueError(f"{path}: the SentencePiece model does not match its SHA-256")
            try:
                import sentencepiece
                self.sp = sentencepiece.SentencePieceProcessor(model_proto=raw)
            except ImportError:
                pass

    def ids(self, text):
        """Token ids of text (str, through SentencePiece, whitespace collapsed as nmt does) or
        ids as given."""
        if not isinstance(text, str):
            return [int(i) for i in text]
        if self.sp is None:
            raise RuntimeError("text needs the sentencepiece module; pass token ids instead")
        return self.sp.encode(" ".join(text.split()))

    @torch.no_grad()
    def score(self, src, ref):
        """(log-probability of ref given src, natural log with EOS, and its per-token values)."""
        s, r = self.ids(src), self.ids(ref)
        batch = dict(src=torch.tensor([s + [EOS]]), src_len=torch.tensor([len(s) + 1]),
                     tgt_in=torch.tensor([[BOS] + r]), tgt_len=torch.tensor([len(r) + 1]))
        logits = forward(self.params, self.cfg, self.mode, self.norm, batch)[0]
        lp = torch.log_softmax(logits.double(), dim=-1)
        tokens = lp.gather(1, torch.tensor(r + [EOS]).unsqueeze(1)).squeeze(1).tolist()
        return sum(tokens), tokens

    @torch.no_grad()
    def translate(self, src, max_len_a=None, max_len_b=None):
        """Greedy translation of src (str or ids): a str when src is one, else the ids."""
        s = self.ids(src)
        if not s:
            return "" if isinstance(src, str) else []
        d = self.config["decode"]
        a = torch.tensor(d["max_len_a"] if max_len_a is None else max_len_a, dtype=torch.float32)
        b = d["max_len_b"] if max_len_b is None else max_len_b
        max_len = max(1, int(a * torch.tensor(len(s) + 1, dtype=torch.float32)) + b)
        src_t, src_len = torch.tensor([s + [EOS]]), torch.tensor([len(s) + 1])
        enc = encode(self.params, self.cfg, self.mode, self.norm, src_t, src_len)
        out = []
        for t in range(max_len):
            if t + 1 >= max_len:
                break  # EOS is forced
            tin = torch.tensor([[BOS] + out])
            z = decode(self.params, self.cfg, self.mode, self.norm, enc, src_len, tin,
                       torch.tensor([t + 1]))[0, -1]
            z[PAD] = z[BOS] = float("-inf")
            best = int(torch.argmax(z))
            if best == EOS:
                break
            out.append(best)
        return self.sp.decode(out) if isinstance(src, str) else out


def load(path):
    """The model of an export (nmt export -o path), in eval mode."""
    return NmtModel(path).eval()
