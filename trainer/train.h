/* train.h: `nmt train`: the training loop over a prepared data directory.
 *   per update: `accum` batches forward+backward (gradients summed), then divided by the
 *   update's target tokens, clipped, checked for NaN/Inf, one AdamW step with the scheduled
 *   learning rate; a log line every disp_freq updates (human and JSON lines in the run
 *   directory); validation every valid_freq updates (dev NLL and BLEU, best checkpoint,
 *   patience); checkpoint.last (full state) and checkpoint.uN (weights) every save_freq.
 * A run directory that holds checkpoint.last is resumed exactly where it stopped: the same
 * parameters, moments, data position and dropout masks, so an interrupted run ends bit-identical
 * to an uninterrupted one at the same thread count; a damaged checkpoint.last stops with a
 * message naming the intact checkpoints to go on from. SIGINT/SIGTERM finish the current update,
 * write checkpoint.last and exit with TRAIN_INTERRUPTED (3), so that scripts can tell an
 * interrupted run, to be resumed by the same command, from a finished one (0). */
#ifndef NMT_TRAIN_H
#define NMT_TRAIN_H

#include "config.h"

enum { TRAIN_INTERRUPTED = 3 };  // the exit code after SIGINT/SIGTERM

/* Runs training as configured; returns the process exit code: 0 when a stopping rule ended the
 * run, TRAIN_INTERRUPTED after a signal. */
int train_run(Config *cfg);

#endif
