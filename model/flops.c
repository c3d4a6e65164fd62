/* flops.c: the analytic FLOP counts of flops.h. The mode-specific parts (the columns each head
 * scores, the key-side extra products) come from the attention mode's table (AttnImpl);
 * everything else is counted here. */
#include "flops.h"

/* Forward products of the key-side projections (K, V and the mode's extra state) of Nk keys. */
static double kv_proj_flops(const Attention *a, double Nk) {
    const AttnDims *d = &a->d;
    return Nk * (2.0 * d->D * d->W + 2.0 * d->D * d->D + a->impl->kv_extra_flops(d, &a->p));
}

/* The core of one call: scores of B sentences' Tq queries against Tk keys over the columns each
 * head scores (the mode's head_span), and P·V. */
static double scores_flops(const Attention *a, int B, int Tq, int Tk) {
    double width = 0;
    for (int h = 0; h < a->d.H; h++) {
        int col, w;
        a->impl->head_span(&a->d, h, &col, &w);
        width += w;
    }
    return 2.0 * B * Tq * Tk * width;
}

static double pv_flops(const Attention *a, int B, int Tq, int Tk) {
    return 2.0 * B * Tq * Tk * a->d.D;
}

/* attention_forward (and attention_backward) for (B, Tq, Tk), added to f. Backward: the gradients
 * of both operands of every projection (2x), of the scores (2x), and o = P·V recomputed plus dP
 * and dV (3x). */
static void attention_flops(const Attention *a, int B, int Tq, int Tk, bool backward,
                            ModelFlops *f) {
    const AttnDims *d = &a->d;
    const double Nq = (double)B * Tq;
    double proj = Nq * 2.0 * d->D * d->W + kv_proj_flops(a, (double)B * Tk) + Nq * 2.0 * d->D * d->D;
    double scores = scores_flops(a, B, Tq, Tk), pv = pv_flops(a, B, Tq, Tk);
    f->attention += backward ? 3.0 * proj : proj;
    f->attention_core += backward ? 3.0 * scores + 4.0 * pv : scores + pv;
}

/* ffn_forward (and ffn_backward) on N rows: two products forward, four backward. */
static double ffn_flops(const Model *m, double N, bool backward) {
    double fwd = 2.0 * 2.0 * N * m->D * m->F;
    return backward ? 3.0 * fwd : fwd;
}

/* The encoder's layers on B sentences of S positions, added to f. */
static void encoder_flops(const Model *m, int B, int S, bool backward, ModelFlops *f) {
    for (int l = 0; l < m->n_enc; l++) {
        attention_flops(&m->enc[l].self_attn, B, S, S, backward, f);
        f->ffn += ffn_flops(m, (double)B * S, backward);
    }
}

ModelFlops model_step_flops(const Model *m, int B, int S, int T, bool backward) {
    ModelFlops f = {0};
    encoder_flops(m, B, S, backward, &f);
    for (int l = 0; l < m->n_dec; l++) {
        attention_flops(&m->dec[l].self_attn, B, T, T, backward, &f);
        attention_flops(&m->dec[l].cross_attn, B, T, S, backward, &f);
        f.ffn += ffn_flops(m, (double)B * T, backward);
    }
    // logits (B*T, V); backward: d(dec_out) and d(emb)
    f.loss = 2.0 * B * T * m->V * m->D * (backward ? 3.0 : 1.0);
    return f;
}

ModelFlops model_decode_flops(const Model *m, int sents, int S, int T, int beam) {
    ModelFlops f = {0};
    const AttnDims *d = &m->ad;
    const int R = sents * beam;
    const double q_proj = 2.0 * d->D * d->W, o_proj = 2.0 * d->D * d->D;
    encoder_flops(m, sents, S, false, &f);
    for (int l = 0; l < m->n_dec; l++) {
        const Attention *self = &m->dec[l].self_attn, *cross = &m->dec[l].cross_attn;
        f.attention += kv_proj_flops(cross, (double)sents * S);  // decode_begin
        for (int t = 0; t < T; t++) {
            // self-attention: this position's query, key and value, over keys 0..t
            f.attention += R * (q_proj + o_proj) + kv_proj_flops(self, R);
            f.attention_core += scores_flops(self, R, 1, t + 1) + pv_flops(self, R, 1, t + 1);
            // cross-attention: the beam rows of a sentence are its queries
            f.attention += R * (q_proj + o_proj);
            f.attention_core += scores_flops(cross, sents, beam, S) + pv_flops(cross, sents, beam, S);
        }
        f.ffn += ffn_flops(m, (double)R * T, false);
    }
    f.loss = 2.0 * R * T * m->V * m->D;  // logits per step
    return f;
}

double model_flops_total(ModelFlops f) { return f.attention + f.attention_core + f.ffn + f.loss; }
