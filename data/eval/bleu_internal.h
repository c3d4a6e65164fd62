/* bleu_internal.h: what the bleu*.c files share beyond the public bleu.h. */
#ifndef NMT_BLEU_INTERNAL_H
#define NMT_BLEU_INTERNAL_H

#include <stdbool.h>

#include "bleu.h"

/* The metric's score of summed statistics, computed with Python floats (float32 false, sums
 * exact) or with NumPy float32 scalars (float32 true, sums are float32 values) as sacreBLEU does
 * on bootstrap resamples. *python_zero tells whether chrF returned Python's 0.0. */
BleuScore bleu_score_held(const BleuMetric *m, const double *sums, bool float32,
                          bool *python_zero);

#endif
