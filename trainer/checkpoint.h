/* checkpoint.h: checkpoint files. A checkpoint holds everything to translate with a model (the
 * resolved config, the SentencePiece model bytes, the parameters by name) and, for
 * checkpoint.last, everything to continue training bit-exactly (Adam moments and the training
 * state: step counters, data cursor, RNG, best metric, patience). With a moving average of the
 * parameters (train.ema_decay), the parameters are the average, the model to translate with, and
 * a full checkpoint holds the weights training continues from in a section of their own.
 *
 * File: magic "NMTCKPT1", uint32 version, uint32 section count, uint64 payload bytes, uint32
 * CRC-32 (zlib) of the payload; the payload is a list of sections (uint32 tag, uint64 length,
 * bytes). Writes stream to a temporary file in the same directory, then fsync, rename, fsync of
 * the directory (kernels/atomic.h): a crash never leaves a partial checkpoint under the final name,
 * and no copy of the parameters is made in memory. Loading maps the file, checks the magic,
 * version, size and checksum, then that every section, the index and every tensor lie within the
 * file and no known section appears twice, and says which check failed. The CRC does not cover
 * the header, so a file whose version field is not 1 but whose payload verifies under version 1's
 * rule is reported as damaged, not as another version: a later version must make that rule fail
 * on its files (a CRC that also covers the header, say). */
#ifndef NMT_CHECKPOINT_H
#define NMT_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"

/* Training progress, saved in full checkpoints. */
typedef struct TrainState {
    long update;          // optimizer updates done
    long micro_step;      // batches processed (the dropout RNG counter)
    int epoch;            // data epoch of the next batch (1-based)
    long batch_in_epoch;  // index of the next batch within its epoch
    double best_metric;   // best validation metric so far (higher is better)
    int has_best;
    int stalls;           // validations since the last improvement
    double train_seconds; // training time so far
    long tokens;          // target tokens trained on
    long skipped;         // updates skipped for non-finite gradients
    int ranks;            // data-parallel ranks of the run that wrote it (1 in older files)
} TrainState;

typedef struct CheckpointData {
    const char *config;        // resolved config (YAML text)
    const void *spm;           // SentencePiece model bytes (may be NULL)
    size_t spm_len;
    const ParamTable *params;  // values, and moments when with_optimizer
    bool with_optimizer;
    const TrainState *state;   // NULL for a weights-only checkpoint
    /* NULL, or the moving average of the values (the arenas' layout): then it is saved as the
     * parameters, and params->param as the training weights when with_optimizer. */
    const float *averaged;
} CheckpointData;

/* The N of every periodic checkpoint.uN in run_dir, oldest first, into *updates (malloc'd, NULL
 * when there are none) and *count. 0, or -1 after status_fail if the directory cannot be read. */
int checkpoint_periodic(const char *run_dir, long **updates, int *count);

/* I/O errors are fatal and name the file; the previous file under `path` stays intact. */
void checkpoint_save(const char *path, const CheckpointData *d);

/* A loaded checkpoint: sections point into the mapped file. */
typedef struct Checkpoint {
    const char *map;   // the whole file, mapped read-only
    size_t map_size;
    const char *blob;  // the payload
    size_t size;
    char *config;              // NUL-terminated copy
    const void *spm;
    size_t spm_len;
    bool has_optimizer, has_state;
    bool has_training;  // the training weights are saved apart from the (averaged) values
    TrainState state;
    // parameter index
    int nparams;
    struct CkptTensor {
        char name[64];
        int rows, cols;
        size_t numel;
        const float *value, *adam_m, *adam_v;  // adam_* NULL without optimizer state
        const float *training;  // the training weights: value itself unless has_training
    } *tensors;
} Checkpoint;

/* Maps and verifies the file; 0, or -1 after status_fail (status.h) naming the path. A file that
 * starts with a safetensors header is read as an export (export.h: config, SentencePiece model and
 * parameters, no optimizer or training state). */
int checkpoint_load(const char *path, Checkpoint *ck);
void checkpoint_free(Checkpoint *ck);
/* Copies tensors into pt by name; every tensor of pt must be present with the same shape. With
 * `optimizer` (resuming training): the training weights and the Adam moments, and the values into
 * `averaged` (the arenas' layout) unless it is NULL. Without: the values. 0, or -1 after
 * status_fail. */
int checkpoint_restore(const Checkpoint *ck, ParamTable *pt, bool optimizer, float *averaged);

#endif
