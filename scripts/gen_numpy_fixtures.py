#!/usr/bin/python3
"""gen_numpy_fixtures.py: writes the NumPy reference data that tests/test_bleu_paired.c checks the
C paired bootstrap against (run with the Debian interpreter, which has NumPy):

    /usr/bin/python3 scripts/gen_numpy_fixtures.py tests/fixtures

numpy_rng.txt        SeedSequence states and numpy.random.default_rng(seed).choice(n, size) draws.
numpy_bootstrap.txt  ndarray.sum() of float64 and float32 arrays (pairwise summation), and
                     synthetic per-segment BLEU and chrF statistics of a few systems and the
                     results of sacreBLEU's paired bootstrap test on them (significance.py:
                     float32 statistics, scores from NumPy scalars, estimate_ci, p-values), with
                     NumPy 2 promotion rules (NEP 50; emulated on NumPy 1.24 via the 'weak'
                     promotion state).
"""
import math
import os
import random
import sys

import numpy as np

if hasattr(np, '_set_promotion_state'):
    np._set_promotion_state('weak')

SEED = 12345
N_SAMPLES = 1000
N_SEGMENTS = 200


def my_log(x):
    return -9999999999 if x == 0.0 else math.log(x)


def bleu_score(stats):
    """BLEU.compute_bleu, 'exp' smoothing, on a statistics row (Python ints or float32)."""
    correct, total = stats[2:6], stats[6:10]
    sys_len, ref_len = int(stats[0]), int(stats[1])
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    else:
        bp = 1.0
    precisions = [0.0] * 4
    if not any(correct):
        return 0.0
    smooth = 1.
    for n in range(1, 5):
        if total[n - 1] == 0:
            break
        if correct[n - 1] == 0:
            smooth *= 2
            precisions[n - 1] = 100. / (smooth * total[n - 1])
        else:
            precisions[n - 1] = 100. * correct[n - 1] / total[n - 1]
    log_sum = 0
    for p in precisions:  # sum() as CPython <= 3.11 adds: left to right
        log_sum = log_sum + my_log(p)
    return bp * math.exp(log_sum / 4)


def chrf_score(stats, norders=8, beta=2):
    """CHRF._compute_f_score without eps smoothing (chrF++: 6 char + 2 word orders)."""
    factor = beta ** 2
    avg_prec, avg_rec, effective_order = 0.0, 0.0, 0
    for i in range(norders):
        n_hyp, n_ref, n_match = stats[3 * i:3 * i + 3]
        prec = n_match / n_hyp if n_hyp > 0 else 1e-16
        rec = n_match / n_ref if n_ref > 0 else 1e-16
        if n_hyp > 0 and n_ref > 0:
            avg_prec += prec
            avg_rec += rec
            effective_order += 1
    if effective_order == 0:
        avg_prec = avg_rec = 0.0
    else:
        avg_prec /= effective_order
        avg_rec /= effective_order
    if avg_prec + avg_rec:
        score = (1 + factor) * avg_prec * avg_rec
        score /= ((factor * avg_prec) + avg_rec)
        return 100 * score
    return 0.0


def estimate_ci(scores):
    scores = np.sort(scores)
    n = len(scores)
    lower_idx = n // 40
    upper_idx = n - lower_idx - 1
    return scores.mean(), 0.5 * (scores[upper_idx] - scores[lower_idx])


def paired_bootstrap(systems, score_fn):
    """(score, mean, ci, p) per system; systems[0] is the baseline."""
    n = len(systems[0])
    idxs = np.random.default_rng(SEED).choice(n, size=(N_SAMPLES, n), replace=True)
    actual = [score_fn([sum(col) for col in zip(*seg)]) for seg in systems]
    resampled = []
    for seg in systems:
        stats = np.array(seg, dtype='float32')
        resampled.append(np.array([score_fn(s.sum(0)) for s in stats[idxs]]))
    out = []
    for k, scores in enumerate(resampled):
        mean, ci = estimate_ci(scores)
        p = None
        if k > 0:
            diff = abs(actual[0] - actual[k])
            sample_diffs = np.abs(scores - resampled[0])
            centred = sample_diffs - sample_diffs.mean()
            p = (np.sum(centred > diff).item() + 1) / (N_SAMPLES + 1)
        out.append((actual[k], float(mean), float(ci), p, str(scores.dtype)))
    return out


def bleu_segment(rnd, quality, empty):
    hyp_len = 0 if empty else rnd.randint(0, 40)
    ref_len = rnd.randint(1, 40)
    total = [max(0, hyp_len - n) for n in range(4)]
    correct, q = [], quality
    for n in range(4):
        correct.append(sum(rnd.random() < q for _ in range(total[n])))
        q *= quality
    return [hyp_len, ref_len] + correct + total


def chrf_segment(rnd, quality, empty):
    stats = []
    for max_len, orders in ((150, 6), (30, 2)):
        hyp_len = 0 if empty else rnd.randint(0, max_len)
        ref_len = rnd.randint(1, max_len)
        q = quality
        for n in range(1, orders + 1):
            n_ref = max(0, ref_len - n + 1)
            n_hyp = max(0, hyp_len - n + 1) if n_ref else 0
            n_match = sum(rnd.random() < q for _ in range(min(n_hyp, n_ref)))
            stats += [n_hyp, n_ref, n_match]
            q *= quality
    return stats


def synthetic_systems(segment_fn):
    """Baseline, a close system, a weak one, an empty one, and one with a single matching
    segment (so that many resamples score exactly 0)."""
    rnd = random.Random(7)
    systems = []
    for quality in (0.6, 0.62, 0.3):
        systems.append([segment_fn(rnd, quality, False) for _ in range(N_SEGMENTS)])
    systems.append([segment_fn(rnd, 0.0, True) for _ in range(N_SEGMENTS)])
    lone = [segment_fn(rnd, 0.0, False) for _ in range(N_SEGMENTS)]
    lone[17] = segment_fn(rnd, 0.9, False)
    systems.append(lone)
    return systems


def write_bootstrap(path):
    with open(path, 'w') as f:
        f.write('# scripts/gen_numpy_fixtures.py: paired bootstrap of sacreBLEU on synthetic '
                f'statistics (numpy {np.__version__}, NEP 50 promotion).\n')
        f.write('# metric NAME nstats NSTATS nsegments N nsamples K seed S nsystems M, then the '
                'statistics of each system (one segment per line),\n')
        f.write('# then per system: expect SYSTEM SCORE MEAN CI P (P nan for the baseline) '
                'DTYPE.\n')
        f.write('# sum64/sum32 N V... SUM: ndarray.sum() of N float64/float32 values.\n')
        rnd = np.random.default_rng(5)
        for n in (5, 8, 100, 128, 129, 1000, 2001):
            for tag, dtype in (('sum64', np.float64), ('sum32', np.float32)):
                values = (rnd.random(n) * 100).astype(dtype)
                f.write(f'{tag} {n} ' + ' '.join(repr(float(v)) for v in values) +
                        f' {float(values.sum())!r}\n')
        for name, segment_fn, score_fn in (('bleu', bleu_segment, bleu_score),
                                           ('chrf++', chrf_segment, chrf_score)):
            systems = synthetic_systems(segment_fn)
            nstats = len(systems[0][0])
            f.write(f'metric {name} nstats {nstats} nsegments {N_SEGMENTS} nsamples {N_SAMPLES} '
                    f'seed {SEED} nsystems {len(systems)}\n')
            for seg in systems:
                for row in seg:
                    f.write(' '.join(map(str, row)) + '\n')
            for k, (score, mean, ci, p, dtype) in enumerate(paired_bootstrap(systems, score_fn)):
                p_text = 'nan' if p is None else repr(p)
                f.write(f'expect {k} {score!r} {mean!r} {ci!r} {p_text} {dtype}\n')


def write_rng(path):
    with open(path, 'w') as f:
        f.write(f'# scripts/gen_numpy_fixtures.py: numpy {np.__version__} random streams.\n')
        f.write('# seedseq SEED W0..W7: SeedSequence(SEED).generate_state(8, uint32)\n')
        f.write('# choice SEED N COUNT V...: numpy.random.default_rng(SEED).choice(N, size=COUNT)'
                '\n')
        for seed in (0, 1, 12345, 2**32 - 1, 2**32 + 5, 2**63 + 11):
            words = np.random.SeedSequence(seed).generate_state(8, np.uint32)
            f.write(f'seedseq {seed} ' + ' '.join(map(str, words)) + '\n')
        cases = [(12345, 3000, 6000), (12345, 1014, 3000), (12345, 1, 10), (12345, 2, 200),
                 (0, 7, 500), (2**32 + 5, 1000, 500), (12345, 2**31 + 1, 500),
                 (12345, 2**32, 300), (99, 3 * 2**30, 500)]
        for seed, n, count in cases:
            draws = np.random.default_rng(seed).choice(n, size=count, replace=True)
            f.write(f'choice {seed} {n} {count} ' + ' '.join(map(str, draws)) + '\n')


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else 'tests/fixtures'
    os.makedirs(out_dir, exist_ok=True)
    write_rng(os.path.join(out_dir, 'numpy_rng.txt'))
    write_bootstrap(os.path.join(out_dir, 'numpy_bootstrap.txt'))


if __name__ == '__main__':
    main()
