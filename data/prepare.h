/* prepare.h: `nmt prepare`: raw parallel corpora in, everything training reads out.
 *
 * prepare_run streams the corpora of each split (text.h), normalizes and cleans them (clean.h),
 * trains one joint SentencePiece model on a seeded reservoir sample of the cleaned training
 * sentences of both sides (spm.h), encodes every split on all cores and writes into spec->dir:
 *   spm.model                  the SentencePiece model
 *   train.tok valid.tok test.tok   token caches (tokcache.h); test.tok is empty without test sets
 *   valid.src valid.tgt test.src test.tgt   the normalized text, line i = cache pair i (for BLEU)
 *   manifest.json              inputs (sizes, CRC-32), the config, counts per split and per drop
 *                              reason, and the keys that decide reuse
 * Training pairs are dropped for the reasons of clean.h, each counted and logged; valid and test
 * pairs are never dropped (invalid UTF-8 there is a fatal error naming file:line).
 * Reuse: with unchanged inputs (size and CRC-32) and config the directory is kept as it is; when
 * only valid/test or the length filters changed, the SentencePiece model is kept and the splits
 * are encoded again; anything else rebuilds all. Memory: the dedup hash set, a bitmap of the kept
 * training pairs, the SentencePiece sample and the cache offsets; no copy of a corpus.
 * Errors in the inputs or the spec are fatal and name the file, line or config key. */
#ifndef NMT_DATA_PREPARE_H
#define NMT_DATA_PREPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "data_config.h"
#include "text.h"

typedef enum PrepareOutcome {
    PREPARE_REUSED,     // everything in dir was up to date
    PREPARE_REENCODED,  // the SentencePiece model was kept, the splits were encoded again
    PREPARE_BUILT,      // everything was built
} PrepareOutcome;

/* The `data:` section of the configuration drives everything (data/data_keys.def). */
PrepareOutcome prepare_run(const DataConfig *spec);

typedef enum Split { SPLIT_TRAIN, SPLIT_VALID, SPLIT_TEST, NSPLITS } Split;

#define PREPARE_SPM_MODEL "spm.model"
#define PREPARE_MANIFEST "manifest.json"
const char *split_name(Split split);  // "train", "valid", "test"
/* "<dir>/<split>.<ext>" (malloc'd), ext "tok" (cache), "src" or "tgt" (normalized text). */
char *prepare_split_path(const char *dir, Split split, const char *ext);

#endif
