#!/usr/bin/python3
"""make-corpus.py N OUT [--seed S] [--data DIR]: a deterministic N-pair English-German training
corpus of realistic shape with defects injected at known counts, laid out like the WMT14 data of
configs/transformer-base.yaml, for measuring and testing `nmt prepare` at scale.

Clean pairs join two or three real news pairs (WMT news test sets 2008-2011 from DIR/wmt14, DIR
defaulting to $NMT_DATA or ../shared/data): lengths and vocabulary are real, and no two clean pairs
are equal after prepare's normalization. newstest2013 becomes the validation set and newstest2012,
written as WMT SGM, the test set; neither is used for training pairs.

OUT/ receives
  training/europarl-v7.de-en.{en,de}             plain text, 42.5% of the pairs
  commoncrawl/commoncrawl.de-en.{en,de}.gz       gzip, 53.1%
  training/news-commentary-v9.de-en.en           plain text, CRLF line ends, a byte order mark
  training/news-commentary-v9.de-en.de.gz        gzip, CRLF line ends; 4.4%
  dev/newstest2013.{en,de}, test-full/newstest2012-{src.en,ref.de}.sgm
  data.yaml     the data: lists of these files, an overlay for configs/transformer-base.yaml
  corpus.json   what was injected: per drop reason of `nmt prepare` (data/clean.h) the number of
                pairs that must be dropped for it, in total and per corpus, and the filter
                settings under which these counts are exact

Each injected defect hits exactly one drop reason, by construction:
  duplicate     a copy of an earlier clean pair (exact, or differing only in whitespace)
  empty         a side that is empty or whitespace only (the other side a real sentence)
  invalid_utf8  one invalid byte sequence in one side (0xFF, an overlong form, a surrogate, ...)
  control_char  one control character in one side (NUL, BEL, ESC, DEL, a C1 character)
  too_long      a side of more than max_len words (some of 100 KB)
  length_ratio  a 2-byte side against a side of more than max_len_ratio * 3 words
The subword stage is exact because SentencePiece splits at whitespace (a side has at least as many
subword tokens as words) and every token covers at least one byte (at most bytes + 1 tokens, the
+1 for the word-boundary mark at the start). So with data.max_len = MAX_LEN and data.max_len_ratio
= MAX_RATIO every clean pair (at most MAX_LEN - 1 bytes a side, (longest side's bytes + 1) at
most MAX_RATIO * the shorter side's words) is kept whatever the vocabulary; with the settings of
transformer-base.yaml some real pairs are dropped by the length filters as well."""

import argparse
import gzip
import hashlib
import json
import os
import random
import sys

MAX_LEN = 1000     # data.max_len under which the subword-stage counts are exact
MAX_RATIO = 20.0   # data.max_len_ratio likewise
REASONS = ["invalid_utf8", "control_char", "empty", "duplicate", "too_short", "too_long",
           "length_ratio"]
RATES = {"duplicate": 0.03, "empty": 0.005, "invalid_utf8": 0.0005, "control_char": 0.001,
         "too_long": 0.0002, "length_ratio": 0.003}  # per pair; at least one each
HUGE_LINES = 3  # sides of 100 KB, counted under too_long
# (name, files relative to OUT, share of the pairs, gzip per side, CRLF, byte order mark on src)
CORPORA = [
    ("europarl", "training/europarl-v7.de-en", ".en", ".de", 0.425, (False, False), False, False),
    ("commoncrawl", "commoncrawl/commoncrawl.de-en", ".en.gz", ".de.gz", 0.531, (True, True),
     False, False),
    ("news-commentary", "training/news-commentary-v9.de-en", ".en", ".de.gz", 0.044,
     (False, True), True, True),
]
POOL_SETS = ["news-test2008", "newssyscomb2009", "newstest2009", "newstest2010", "newstest2011"]
# Python's str.split() whitespace, as data/clean.c, plus U+2581
SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005" \
         "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\u2581"
CONTROLS = ["\x00", "\x07", "\x08", "\x1b", "\x7f", "\x81", "\x90", "\x9d"]
INVALID = [b"\xff", b"\xfe", b"\x80", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80",
           b"\xf5\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xc3"]


def normalize(s):
    """data/clean.c's normalization: whitespace runs become one space, ends trimmed."""
    return " ".join(s.replace("\u2581", " ").split())


def has_control(s):
    return any((ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f) and c not in SPACES for c in s)


def load_pool(data):
    """The real pairs of the news sets, normalized, without control characters or duplicates."""
    pool, seen = [], set()
    for name in POOL_SETS:
        with open(os.path.join(data, "wmt14", name + ".en"), encoding="utf-8") as f:
            en = f.read().split("\n")
        with open(os.path.join(data, "wmt14", name + ".de"), encoding="utf-8") as f:
            de = f.read().split("\n")
        for s, t in zip(en, de):
            s, t = normalize(s), normalize(t)
            if s and t and not has_control(s + t) and (s, t) not in seen:
                seen.add((s, t))
                pool.append((s, t, len(s.encode()), len(t.encode()), len(s.split()),
                             len(t.split())))
    return pool


class Maker:
    def __init__(self, pool, seed):
        self.pool = pool
        by_len = sorted(range(len(pool)), key=lambda i: pool[i][2])
        self.short = by_len[: len(by_len) // 2]  # the shorter half, so lengths stay realistic
        self.rng = random.Random(seed)
        self.seen = set()  # 64-bit digests of the normalized pairs that pass the text stage
        self.recent = []   # (4096) recent clean pairs, the originals of duplicates

    def fresh(self, digest_of):
        """Registers a pair by its digest; False if an equal pair was made before."""
        d = hashlib.blake2b(digest_of.encode(), digest_size=8).digest()
        if d in self.seen:
            return False
        self.seen.add(d)
        return True

    def pick(self):
        return self.pool[self.rng.choice(self.short) if self.rng.random() < 0.8
                         else self.rng.randrange(len(self.pool))]

    def clean(self, original=True):
        """A fresh clean pair; original: it may be copied by a later duplicate."""
        while True:
            k = 2 if self.rng.random() < 0.7 else 3
            parts = [self.pick() for _ in range(k)]
            s = " ".join(p[0] for p in parts)
            t = " ".join(p[1] for p in parts)
            longest = max(sum(p[2] for p in parts), sum(p[3] for p in parts)) + k - 1
            words = min(sum(p[4] for p in parts), sum(p[5] for p in parts))
            if longest + 1 <= MAX_LEN and longest + 1 <= MAX_RATIO * words and \
                    self.fresh(s + "\t" + t):
                if original and len(self.recent) < 4096:
                    self.recent.append((s, t))
                elif original:
                    self.recent[self.rng.randrange(4096)] = (s, t)
                return s.encode(), t.encode()

    def long_text(self, min_words, max_bytes):
        """A side of more than min_words words joined from real sentences, with its partner."""
        while True:
            s, t, words = [], [], 0
            while words <= min_words:
                p = self.pick()
                s.append(p[0])
                t.append(p[1])
                words += min(p[4], p[5])
            s, t = " ".join(s), " ".join(t)
            if len(s.encode()) < max_bytes and len(t.encode()) < max_bytes:
                return s, t

    def defect(self, kind, index):
        rng = self.rng
        if kind == "duplicate":
            s, t = rng.choice(self.recent)
            if index % 3 == 2:  # the same after normalization only
                s = s.replace(" ", "  \t", 1) + " "
                t = "\u00a0" + t
            return s.encode(), t.encode()
        if kind == "empty":
            s, t = self.pick()[:2]
            blank = ["", " ", "\t", "\u00a0 ", "\u3000", "\r"][index % 6]
            s, t = ((blank, t), (s, blank), (blank, ""))[index % 3]
            return s.encode(), t.encode()
        if kind in ("invalid_utf8", "control_char"):
            s, t = self.clean(original=False)  # a fresh pair, damaged
            side = [s, t][index % 2]
            cut = side.find(b" ", len(side) // 2)
            cut = len(side) if cut < 0 else cut
            bad = INVALID[index % len(INVALID)] if kind == "invalid_utf8" else \
                CONTROLS[index % len(CONTROLS)].encode()
            side = side[:cut] + bad + side[cut:]
            return (side, t) if index % 2 == 0 else (s, side)
        if kind == "too_long":
            huge = index < HUGE_LINES
            while True:
                if huge:  # 100 KB on one side, a normal sentence on the other
                    s, _ = self.long_text(100 * 1024 // 6, 1 << 30)
                    t = self.pick()[1]
                    s = s.encode()[: 100 * 1024].decode(errors="ignore").rsplit(" ", 1)[0]
                else:
                    s, t = self.long_text(MAX_LEN, 1 << 30)
                if self.fresh(s + "\t" + t):
                    return (s.encode(), t.encode()) if index % 2 == 0 else (t.encode(), s.encode())
        if kind == "length_ratio":
            short = ["Ja", "So", "Na", "Oh"][index % 4] if index % 2 else ["No", "OK", "So"][index % 3]
            while True:
                s, t = self.long_text(int(MAX_RATIO * 3), MAX_LEN - 1)
                pair = (short, t) if index % 2 == 0 else (s, short)
                if self.fresh(pair[0] + "\t" + pair[1]):
                    return pair[0].encode(), pair[1].encode()
        raise ValueError(kind)


def plan(n, seed):
    """The kind of every pair (bytearray, 0 = clean) and the count of each defect."""
    counts = {k: max(1, int(n * r)) for k, r in RATES.items()}
    counts["too_long"] += HUGE_LINES
    kinds = bytearray(n)
    names = [None] + list(RATES)
    pos = 1  # pair 0 stays clean: every duplicate has an original before it
    for code, name in enumerate(names[1:], 1):
        kinds[pos: pos + counts[name]] = bytes([code]) * counts[name]
        pos += counts[name]
    if pos > n:
        sys.exit(f"make-corpus: N = {n} is too small for the {pos - 1} defects")
    rest = list(range(1, n))
    order = kinds[1:]
    random.Random(seed ^ 0x5EED).shuffle(rest)
    shuffled = bytearray(n)
    for i, k in zip(rest, order):
        shuffled[i] = k
    return shuffled, names, counts


def open_out(path, gz):
    f = open(path, "wb")
    return gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=6) if gz else f, f


def write_sgm(path, lines, setid, lang, kind):
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'<{kind} setid="{setid}" srclang="en" trglang="de">\n'
                f'<doc sysid="ref" docid="all" genre="news" origlang="en">\n')
        for i, s in enumerate(lines, 1):
            f.write(f'<seg id="{i}">{esc(s)}</seg>\n')
        f.write(f"</doc>\n</{kind}>\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="pairs in all (clean and defective)")
    ap.add_argument("out", help="output directory")
    ap.add_argument("--seed", type=int, default=1)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--data", default=os.environ.get("NMT_DATA",
                                                     os.path.join(here, "..", "..", "shared", "data")))
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    pool = load_pool(a.data)
    maker = Maker(pool, a.seed)
    kinds, names, counts = plan(a.n, a.seed)
    for d in ("training", "commoncrawl", "dev", "test-full"):
        os.makedirs(os.path.join(out, d), exist_ok=True)

    sizes = [int(a.n * c[4]) for c in CORPORA]
    sizes[0] += a.n - sum(sizes)
    report, first, seen_kind = [], 0, {k: 0 for k in RATES}
    for (name, stem, src_ext, tgt_ext, _, gz, crlf, bom), size in zip(CORPORA, sizes):
        files = [open_out(os.path.join(out, stem + ext), z) for ext, z in zip((src_ext, tgt_ext), gz)]
        end = b"\r\n" if crlf else b"\n"
        if bom:
            files[0][0].write(b"\xef\xbb\xbf")
        injected = {r: 0 for r in REASONS}
        buf = ([], [])
        for i in range(first, first + size):
            kind = names[kinds[i]]
            if kind is None:
                s, t = maker.clean()
            else:
                s, t = maker.defect(kind, seen_kind[kind])
                seen_kind[kind] += 1
                injected[kind] += 1
            buf[0].append(s)
            buf[1].append(t)
            if len(buf[0]) == 8192 or i == first + size - 1:
                for side in (0, 1):
                    files[side][0].write(end.join(buf[side]) + end)
                    buf[side].clear()
        for w, raw in files:
            w.close()
            raw.close()
        report.append({"name": name, "src": os.path.join(out, stem + src_ext),
                       "tgt": os.path.join(out, stem + tgt_ext), "pairs": size,
                       "dropped": injected, "kept": size - sum(injected.values())})
        first += size

    def copy(src, dst):
        with open(os.path.join(a.data, "wmt14", src), "rb") as f, open(os.path.join(out, dst), "wb") as g:
            g.write(f.read())
    copy("newstest2013.en", "dev/newstest2013.en")
    copy("newstest2013.de", "dev/newstest2013.de")
    for lang, kind, name in (("en", "srcset", "src"), ("de", "refset", "ref")):
        with open(os.path.join(a.data, "wmt14", "newstest2012." + lang), encoding="utf-8") as f:
            lines = f.read().split("\n")[:-1]
        write_sgm(os.path.join(out, f"test-full/newstest2012-{name}.{lang}.sgm"), lines,
                  "newstest2012", lang, kind)

    total = {r: sum(c["dropped"][r] for c in report) for r in REASONS}
    manifest = {
        "format": "nmt make-corpus", "pairs": a.n, "seed": a.seed, "pool_pairs": len(pool),
        "kept": a.n - sum(total.values()), "dropped": total,
        "too_long_of_100kb": HUGE_LINES,
        "duplicates_differing_in_whitespace": counts["duplicate"] // 3,
        "exact_with": {"data.min_len": 1, "data.max_len": MAX_LEN, "data.max_len_ratio": MAX_RATIO},
        "corpora": report,
    }
    with open(os.path.join(out, "corpus.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "data.yaml"), "w") as f:
        f.write("# written by scripts/make-corpus.py: the data of a made-up WMT14-sized corpus\n"
                "data:\n  train:\n")
        for c in report:
            f.write(f'    - {{src: "{c["src"]}", tgt: "{c["tgt"]}"}}\n')
        f.write(f'  valid:\n    - {{src: "{out}/dev/newstest2013.en", tgt: "{out}/dev/newstest2013.de"}}\n')
        f.write(f'  test:\n    - {{src: "{out}/test-full/newstest2012-src.en.sgm", '
                f'tgt: "{out}/test-full/newstest2012-ref.de.sgm"}}\n')
    print(f"make-corpus: {a.n} pairs in {out} ({manifest['kept']} clean; dropped by reason: "
          + ", ".join(f"{r} {total[r]}" for r in REASONS if total[r]) + ")", file=sys.stderr)


if __name__ == "__main__":
    main()
