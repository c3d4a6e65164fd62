#!/usr/bin/env python3
"""Whole-model reference values from PyTorch for tests/test_model_ref.c.

Builds the Transformer of model/ explicitly (the functional PyTorch of scripts/nmt_torch.py over a
dict of named tensors with exactly our parameter names and (out, in) shapes; deliberately not
nn.Transformer), for the tiny
config of configs/tiny-test.yaml in every attention mode and norm order, and writes one fixture
per variant into tests/data/: the parameters, a padded batch of unequal lengths, the logits, the
label-smoothed loss and NLL, every gradient by name, and the losses of 10 AdamW steps with
gradient clipping.

Run with Debian's interpreter (python3-torch):  /usr/bin/python3 scripts/make_reference.py

Fixture format (little endian): magic b"NMTREF01", uint32 version, uint32 record count, then per
record: uint32 name length, name (utf-8), uint32 dtype (0 float32, 1 int32), uint32 ndim,
uint32 dims[ndim], data.
"""
import math
import os
import struct
import sys

import torch

from nmt_torch import BOS, EOS, PAD, forward  # the model, shared with the export loader

VERSION = 1
TINY = dict(d_model=32, heads=4, ffn=64, enc_layers=2, dec_layers=2, vocab=64)
LABEL_SMOOTHING = 0.1
ADAM = dict(lr=2e-3, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.01, clip_norm=1.0, steps=10)
VARIANTS = [  # (file tag, attention, collab bias, norm, dk)
    ("concat-post", "concat", "content", "post", 32),
    ("concat-pre", "concat", "content", "pre", 16),
    ("collab-content-post", "collab", "content", "post", 16),
    ("collab-content-pre", "collab", "content", "pre", 8),
    ("collab-query-post", "collab", "query", "post", 12),
    ("collab-query-pre", "collab", "query", "pre", 32),
]


def declare(cfg, mode, bias, norm, dk):
    """Parameter names, shapes and whether weight decay applies, in declaration order."""
    D, H, Fw = cfg["d_model"], cfg["heads"], cfg["ffn"]
    out = [("emb.shared", (cfg["vocab"], D), True)]

    def attn(p):
        out.append((p + ".w_q", (dk, D), True))
        if mode == "concat" or bias == "query":
            out.append((p + ".b_q", (dk,), False))
        out.append((p + ".w_k", (dk, D), True))
        if mode == "concat" or bias == "query":
            out.append((p + ".b_k", (dk,), False))
        if mode == "collab":
            out.append((p + ".mix", (H, dk), False))
            if bias == "content":
                out.append((p + ".u", (H, D), False))
        out.extend([(p + ".w_v", (D, D), True), (p + ".b_v", (D,), False),
                    (p + ".w_o", (D, D), True), (p + ".b_o", (D,), False)])

    def ln(p):
        out.extend([(p + ".g", (D,), False), (p + ".b", (D,), False)])

    def ffn(p):
        out.extend([(p + ".w_1", (Fw, D), True), (p + ".b_1", (Fw,), False),
                    (p + ".w_2", (D, Fw), True), (p + ".b_2", (D,), False)])

    for l in range(cfg["enc_layers"]):
        attn(f"enc.{l}.self_attn"), ln(f"enc.{l}.ln1"), ffn(f"enc.{l}.ffn"), ln(f"enc.{l}.ln2")
    for l in range(cfg["dec_layers"]):
        attn(f"dec.{l}.self_attn"), ln(f"dec.{l}.ln1")
        attn(f"dec.{l}.cross_attn"), ln(f"dec.{l}.ln2")
        ffn(f"dec.{l}.ffn"), ln(f"dec.{l}.ln3")
    if norm == "pre":
        ln("enc.final_ln"), ln("dec.final_ln")
    return out


def init_params(decl, gen):
    P = {}
    for name, shape, _ in decl:
        leaf = name.rsplit(".", 1)[1]
        if leaf == "g":
            t = 1.0 + 0.1 * torch.randn(shape, generator=gen)
        elif len(shape) == 1:
            t = 0.1 * torch.randn(shape, generator=gen)
        else:
            t = torch.randn(shape, generator=gen) * math.sqrt(2.0 / sum(shape))
        P[name] = t.float().requires_grad_(True)
    return P


def loss_fn(logits, tgt_out):
    V = logits.shape[-1]
    lp = torch.log_softmax(logits.reshape(-1, V), dim=-1)
    y = tgt_out.reshape(-1).long()
    keep = y != PAD
    nll = -lp.gather(1, y.unsqueeze(1)).squeeze(1)
    smooth = -lp.sum(-1)
    eps = LABEL_SMOOTHING
    eps_i = eps / (V - 1)
    loss = (1.0 - eps - eps_i) * nll + eps_i * smooth
    return loss[keep].sum(), nll[keep].sum(), int(keep.sum())


def make_batch(gen, V):
    src_len = [7, 4, 6, 2]                       # incl. EOS
    tgt_len = [6, 8, 3, 5]                       # incl. BOS (tgt_in) / EOS (tgt_out)
    B, S, T = len(src_len), max(src_len), max(tgt_len)
    src = torch.full((B, S), PAD, dtype=torch.int32)
    tin = torch.full((B, T), PAD, dtype=torch.int32)
    tout = torch.full((B, T), PAD, dtype=torch.int32)
    for b in range(B):
        words = torch.randint(4, V, (src_len[b] - 1,), generator=gen, dtype=torch.int32)
        src[b, :src_len[b]] = torch.cat([words, torch.tensor([EOS], dtype=torch.int32)])
        tw = torch.randint(4, V, (tgt_len[b] - 1,), generator=gen, dtype=torch.int32)
        tin[b, :tgt_len[b]] = torch.cat([torch.tensor([BOS], dtype=torch.int32), tw])
        tout[b, :tgt_len[b]] = torch.cat([tw, torch.tensor([EOS], dtype=torch.int32)])
    return dict(src=src, tgt_in=tin, tgt_out=tout,
                src_len=torch.tensor(src_len, dtype=torch.int32),
                tgt_len=torch.tensor(tgt_len, dtype=torch.int32))


def adam_losses(P, decl, cfg, mode, norm, batch):
    decay = [P[n] for n, _, d in decl if d]
    no_decay = [P[n] for n, _, d in decl if not d]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": ADAM["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=ADAM["lr"], betas=ADAM["betas"], eps=ADAM["eps"])
    losses = []
    for _ in range(ADAM["steps"]):
        opt.zero_grad()
        loss, _, ntok = loss_fn(forward(P, cfg, mode, norm, batch), batch["tgt_out"])
        losses.append(loss.item() / ntok)
        (loss / ntok).backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), ADAM["clip_norm"])
        opt.step()
    return losses


def write_fixture(path, records):
    with open(path, "wb") as f:
        f.write(b"NMTREF01")
        f.write(struct.pack("<II", VERSION, len(records)))
        for name, t in records:
            t = t.detach().contiguous()
            dtype = 0 if t.dtype == torch.float32 else 1
            if dtype == 1:
                t = t.to(torch.int32)
            raw = name.encode()
            f.write(struct.pack("<I", len(raw)) + raw)
            f.write(struct.pack("<II", dtype, t.dim()) + struct.pack(f"<{t.dim()}I", *t.shape))
            f.write(t.numpy().astype("<f4" if dtype == 0 else "<i4").tobytes())


def main():
    torch.set_num_threads(1)
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")
    cfg = TINY
    for tag, mode, bias, norm, dk in VARIANTS:
        gen = torch.Generator().manual_seed(1234)
        decl = declare(cfg, mode, bias, norm, dk)
        P = init_params(decl, gen)
        batch = make_batch(gen, cfg["vocab"])
        init = {n: t.detach().clone() for n, t in P.items()}
        logits = forward(P, cfg, mode, norm, batch)
        loss, nll, ntok = loss_fn(logits, batch["tgt_out"])
        loss.backward()                                        # gradients of the SUMMED loss
        records = [("config", torch.tensor([cfg["d_model"], cfg["heads"], cfg["ffn"],
                                            cfg["enc_layers"], cfg["dec_layers"], cfg["vocab"],
                                            dk], dtype=torch.int32))]
        records += [(f"param/{n}", init[n]) for n, _, _ in decl]
        records += [(f"batch/{k}", v) for k, v in batch.items()]
        records += [("logits", logits.reshape(-1, cfg["vocab"])),
                    ("loss", torch.tensor([loss.item(), nll.item(), float(ntok)]))]
        records += [(f"grad/{n}", P[n].grad) for n, _, _ in decl]
        P = {n: t.clone().requires_grad_(True) for n, t in init.items()}
        records.append(("adam_losses", torch.tensor(adam_losses(P, decl, cfg, mode, norm, batch))))
        path = os.path.join(out_dir, f"reference-{tag}.bin")
        write_fixture(path, records)
        print(f"{path}: loss {loss.item():.6f} nll {nll.item():.6f} tokens {ntok}")


if __name__ == "__main__":
    main()
