/* cmd_export.c: `nmt export -m CKPT --format safetensors -o OUT`: the parameters by registry
 * name in the safetensors format (export.h), loadable by other tools. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "checkpoint.h"
#include "cmd.h"
#include "export.h"
#include "status.h"

static void usage(FILE *out) {
    fprintf(out, "usage: nmt export -m CHECKPOINT --format safetensors -o OUTPUT\n\n"
                 "Writes the parameters under their registry names (emb.shared, enc.0.self_attn.w_q,\n"
                 "...), the SentencePiece model as the uint8 tensor sentencepiece.model, and in the\n"
                 "metadata the config (YAML as trained, and resolved as JSON under nmt_config),\n"
                 "the special token ids and the SentencePiece model's SHA-256: one file to\n"
                 "translate with (nmt translate/score/eval -m FILE, scripts/nmt_torch.py).\n");
}

int cmd_export(int argc, char **argv) {
    const char *cmd = "export", *model = NULL, *output = NULL, *format = "safetensors";
    const ArgsOption opts[] = {ARGS_OPT_STRING("-m", "--model", &model),
                               ARGS_OPT_STRING("-o", "--output", &output),
                               ARGS_OPT_STRING(NULL, "--format", &format)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), NULL, NULL, usage)) return 0;
    if (!model || !output) args_usage_error(cmd, "-m CHECKPOINT and -o OUTPUT are required");
    if (strcmp(format, "safetensors")) args_usage_error(cmd, "unknown format '%s' (safetensors)", format);
    Checkpoint ck;
    if (checkpoint_load(model, &ck)) FATAL("%s", status_message());
    size_t bytes;
    if (export_safetensors(&ck, output, &bytes)) FATAL("%s: %s", model, status_message());
    fprintf(stderr, "[export] %d tensors (%zu bytes of float32) -> %s\n", ck.nparams, bytes, output);
    checkpoint_free(&ck);
    return 0;
}
