/* average.h: the element-wise mean of the parameters of several checkpoints of one model
 * (fairseq's average_checkpoints, `nmt average`), and the choice of a run's newest ones. */
#ifndef NMT_AVERAGE_H
#define NMT_AVERAGE_H

#include <stddef.h>

/* Averages the checkpoints inputs[n] (the same tensor names and shapes and the same
 * SentencePiece model as the first) into a weights-only checkpoint at output with the config and
 * SentencePiece model of the first; *params receives the parameter count. 0, or -1 after
 * status_fail naming the input, before anything is written. */
int checkpoint_average(const char *const *inputs, int n, const char *output, size_t *params);

/* The paths of the newest n checkpoint.uN files of run_dir (by update number N), oldest first:
 * a malloc'd array of n malloc'd strings. NULL after status_fail naming run_dir when it cannot
 * be read or holds fewer than n (the message lists the ones it holds). */
char **checkpoint_last_paths(const char *run_dir, int n);

#endif
