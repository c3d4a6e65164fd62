// spm.cc: the extern "C" shim of spm.h over sentencepiece::SentencePieceTrainer and
// SentencePieceProcessor (0.1.97, compiled as C++17: its header maps absl::string_view to
// std::string_view). Only the Status-returning API is used, and every entry point runs inside
// guard(), which turns any C++ exception into a status and a message. Buffers handed to C (freed
// with free()) come from the x* wrappers of check.h: running out of memory is fatal, as everywhere.
#include "spm.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "check.h"
#include "status.h"
#include "unigram.h"

struct SpmModel {
    sentencepiece::SentencePieceProcessor processor;
    UnigramEncoder *fast = nullptr;  // unigram.h's encoder, NULL for models it does not cover
    ~SpmModel() { unigram_encoder_free(fast); }
};

namespace {

using sentencepiece::util::Status;
using sentencepiece::util::StatusCode;

constexpr int kInternal = static_cast<int>(StatusCode::kInternal);
constexpr int kInvalidArgument = static_cast<int>(StatusCode::kInvalidArgument);

int fail(const char *what, const Status &status) {
    status_fail("SentencePiece %s: %s", what, status.ToString().c_str());
    return static_cast<int>(status.code());
}

template <class T, class Body>
T guard(T on_exception, const char *what, Body &&body) noexcept {
    try {
        return body();
    } catch (const std::exception &e) {
        status_fail("SentencePiece %s: C++ exception: %s", what, e.what());
    } catch (...) {
        status_fail("SentencePiece %s: unknown C++ exception", what);
    }
    return on_exception;
}

// Feeds the sentences of an SpmNextSentence callback to the trainer.
class CallbackIterator final : public sentencepiece::SentenceIterator {
  public:
    CallbackIterator(SpmNextSentence next, void *ctx) : next_(next), ctx_(ctx) { Next(); }
    bool done() const override { return done_; }
    void Next() override {
        const char *text = nullptr;
        size_t len = 0;
        done_ = next_(ctx_, &text, &len) != 1;
        if (!done_) value_.assign(text, len);
    }
    const std::string &value() const override { return value_; }
    Status status() const override { return Status(); }

  private:
    SpmNextSentence next_;
    void *ctx_;
    std::string value_;
    bool done_ = false;
};

std::string number_text(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

int copy_ids(const std::vector<int> &ids, SpmIds *out) {
    int n = static_cast<int>(ids.size());
    spm_ids_reserve(out, n);
    for (int i = 0; i < n; i++) out->ids[i] = ids[static_cast<size_t>(i)];
    out->n = n;
    return 0;
}

// Takes ownership of a processor whose Load returned status; checks the project's special ids.
int finish_load(SpmModel **out, std::unique_ptr<SpmModel> model, const Status &status,
                const char *origin) {
    if (!status.ok()) {
        status_fail("cannot load SentencePiece model from %s: %s", origin, status.ToString().c_str());
        return static_cast<int>(status.code());
    }
    const sentencepiece::SentencePieceProcessor &p = model->processor;
    if (p.pad_id() != SPM_PAD_ID || p.unk_id() != SPM_UNK_ID || p.bos_id() != SPM_BOS_ID ||
        p.eos_id() != SPM_EOS_ID) {
        status_fail(
            "SentencePiece model from %s has special ids pad=%d unk=%d bos=%d eos=%d; nmt "
            "needs pad=%d unk=%d bos=%d eos=%d (train it with `nmt prepare`)",
            origin, p.pad_id(), p.unk_id(), p.bos_id(), p.eos_id(), SPM_PAD_ID, SPM_UNK_ID,
            SPM_BOS_ID, SPM_EOS_ID);
        return kInvalidArgument;
    }
    const std::string proto = p.serialized_model_proto();
    model->fast = unigram_encoder_new(proto.data(), proto.size());
    *out = model.release();
    return 0;
}

}  // namespace

extern "C" {

int spm_train(const SpmTrainOptions *opt, SpmNextSentence next, void *ctx, char **model,
              size_t *model_len) {
    return guard(kInternal, "training", [&] {
        const std::unordered_map<std::string, std::string> args = {
            {"model_type", opt->model_type},
            {"vocab_size", std::to_string(opt->vocab_size)},
            {"character_coverage", number_text(opt->character_coverage)},
            {"input_sentence_size", std::to_string(opt->input_sentences)},
            {"shuffle_input_sentence", "true"},
            {"num_threads", std::to_string(opt->threads > 0 ? opt->threads : 1)},
            {"normalization_rule_name", "identity"},
            {"byte_fallback", "true"},
            {"pad_id", std::to_string(SPM_PAD_ID)},
            {"unk_id", std::to_string(SPM_UNK_ID)},
            {"bos_id", std::to_string(SPM_BOS_ID)},
            {"eos_id", std::to_string(SPM_EOS_ID)},
            {"minloglevel", opt->verbose ? "0" : "1"},
        };
        sentencepiece::SetRandomGeneratorSeed(opt->seed);
        CallbackIterator sentences(next, ctx);
        std::string bytes;
        Status status = sentencepiece::SentencePieceTrainer::Train(args, &sentences, &bytes);
        if (!status.ok()) return fail("training", status);
        *model = static_cast<char *>(xmalloc(bytes.size()));
        std::memcpy(*model, bytes.data(), bytes.size());
        *model_len = bytes.size();
        return 0;
    });
}

int spm_load_file(SpmModel **model, const char *path) {
    return guard(kInternal, "load", [&] {
        auto m = std::make_unique<SpmModel>();
        Status status = m->processor.Load(path);
        std::string origin = std::string("'") + path + "'";
        return finish_load(model, std::move(m), status, origin.c_str());
    });
}

int spm_load_bytes(SpmModel **model, const void *bytes, size_t len) {
    return guard(kInternal, "load", [&] {
        auto m = std::make_unique<SpmModel>();
        Status status = m->processor.LoadFromSerializedProto(
            std::string_view(static_cast<const char *>(bytes), len));
        std::string origin = "a " + std::to_string(len) + "-byte buffer";
        return finish_load(model, std::move(m), status, origin.c_str());
    });
}

void spm_free(SpmModel *model) { delete model; }

void spm_ids_free(SpmIds *ids) {
    std::free(ids->ids);
    *ids = SpmIds{};
}

void spm_ids_reserve(SpmIds *ids, int n) {
    if (n <= ids->cap) return;
    int cap = n > 2 * ids->cap ? n : 2 * ids->cap;
    ids->ids =
        static_cast<int32_t *>(xrealloc(ids->ids, sizeof(int32_t) * static_cast<size_t>(cap)));
    ids->cap = cap;
}

int spm_encode(const SpmModel *model, const char *text, size_t len, SpmIds *out) {
    if (model->fast && unigram_encode(model->fast, text, len, out)) return 0;
    return spm_encode_library(model, text, len, out);
}

int spm_encode_library(const SpmModel *model, const char *text, size_t len, SpmIds *out) {
    return guard(kInternal, "encode", [&] {
        std::vector<int> ids;
        Status status = model->processor.Encode(std::string_view(text, len), &ids);
        return status.ok() ? copy_ids(ids, out) : fail("encode", status);
    });
}

int spm_sample_encode(const SpmModel *model, const char *text, size_t len, int nbest, float alpha,
                      SpmIds *out) {
    return guard(kInternal, "sample encode", [&] {
        std::vector<int> ids;
        Status status =
            model->processor.SampleEncode(std::string_view(text, len), nbest, alpha, &ids);
        return status.ok() ? copy_ids(ids, out) : fail("sample encode", status);
    });
}

int spm_decode(const SpmModel *model, const int32_t *ids, int n, char **text, size_t *len) {
    return guard(kInternal, "decode", [&] {
        int size = model->processor.GetPieceSize();
        for (int i = 0; i < n; i++) {
            if (ids[i] < 0 || ids[i] >= size) {
                status_fail(
                    "SentencePiece decode: id %d at position %d is outside the vocabulary "
                    "[0, %d)",
                    ids[i], i, size);
                return kInvalidArgument;
            }
        }
        std::string decoded;
        Status status = model->processor.Decode(std::vector<int>(ids, ids + n), &decoded);
        if (!status.ok()) return fail("decode", status);
        *text = static_cast<char *>(xmalloc(decoded.size() + 1));
        std::memcpy(*text, decoded.c_str(), decoded.size() + 1);
        *len = decoded.size();
        return 0;
    });
}

int spm_vocab_size(const SpmModel *model) {
    return guard(-1, "vocab size", [&] { return model->processor.GetPieceSize(); });
}

int spm_piece_to_id(const SpmModel *model, const char *piece) {
    return guard(-1, "piece to id", [&] { return model->processor.PieceToId(piece); });
}

const char *spm_id_to_piece(const SpmModel *model, int id) {
    return guard(static_cast<const char *>(nullptr), "id to piece", [&]() -> const char * {
        if (id < 0 || id >= model->processor.GetPieceSize()) return nullptr;
        return model->processor.IdToPiece(id).c_str();
    });
}

}  // extern "C"
