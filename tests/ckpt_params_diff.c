/* ckpt_params_diff A B [TOL [SKIP]]: compares the parameters of two checkpoints tensor by tensor
 * (same names and shapes required) and prints the largest absolute difference and where it is.
 * Exit 0 when every value differs by at most TOL (default 0: bit-identical), 1 otherwise, 2 on
 * error. Tensors whose names end in SKIP are left out of the tolerance (the key biases, say,
 * whose true gradient is zero: Adam turns the rounding noise of theirs into full steps).
 * A tool of the data-parallel tests (test_mpi.sh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "status.h"

int main(int argc, char **argv) {
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: ckpt_params_diff A B [TOL [SKIP]]\n");
        return 2;
    }
    const double tol = argc >= 4 ? atof(argv[3]) : 0.0;
    const char *skip = argc == 5 ? argv[4] : NULL;
    Checkpoint a, b;
    if (checkpoint_load(argv[1], &a) || checkpoint_load(argv[2], &b)) {
        fprintf(stderr, "ckpt_params_diff: %s\n", status_message());
        return 2;
    }
    if (a.nparams != b.nparams) {
        fprintf(stderr, "ckpt_params_diff: %d tensors against %d\n", a.nparams, b.nparams);
        return 2;
    }
    double worst = 0;
    const char *where = "-";
    size_t differing = 0;
    for (int t = 0; t < a.nparams; t++) {
        const struct CkptTensor *x = &a.tensors[t], *y = &b.tensors[t];
        if (strcmp(x->name, y->name) || x->numel != y->numel) {
            fprintf(stderr, "ckpt_params_diff: tensor %d is %s (%zu) against %s (%zu)\n", t,
                    x->name, x->numel, y->name, y->numel);
            return 2;
        }
        size_t len = strlen(x->name);
        if (skip && len >= strlen(skip) && !strcmp(x->name + len - strlen(skip), skip)) continue;
        for (size_t i = 0; i < x->numel; i++) {
            double d = fabs((double)x->value[i] - (double)y->value[i]);
            differing += memcmp(&x->value[i], &y->value[i], sizeof(float)) != 0;
            if (d > worst || isnan(d)) worst = d, where = x->name;
        }
    }
    printf("%zu values differ; largest difference %.3g (in %s)\n", differing, worst, where);
    int same = differing == 0 || worst <= tol;
    checkpoint_free(&a), checkpoint_free(&b);
    return same ? 0 : 1;
}
