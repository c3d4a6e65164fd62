# cli_lib.sh: helpers of the tests that run the nmt binary. Sourced, it moves into a scratch
# directory ($work, removed on exit); expect and check count passes and failures in $passed and
# $failed.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
expect() {  # expected-exit-code expected-text command...
    local code=$1 text=$2
    shift 2
    "$@" > out.txt 2>&1
    local got=$?
    if [ $got -ne "$code" ] || ! grep -qF -- "$text" out.txt; then
        echo "FAIL: '$*' exited $got (want $code), output lacks '$text':"
        head -5 out.txt
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}
check() {  # description command...: passes when the command succeeds
    local what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failed=$((failed + 1)); fi
}
# wait_while_alive PID command...: waits until the command succeeds; fails when process PID has
# ended and it still does not. No deadline of its own (ctest's timeout is the guard): a busy
# machine only makes it wait longer.
wait_while_alive() {
    local pid=$1
    shift
    until "$@"; do
        kill -0 "$pid" 2> /dev/null || { "$@"; return; }
        sleep 0.05
    done
}
# wait_for_update PID JSONL N: waits until the training log JSONL records update N (as above)
wait_for_update() { wait_while_alive "$1" grep -qs "\"update\":$3," "$2"; }
# A synthetic parallel corpus of made-up words, the target reversing the source: the first
# $2 of $1 pairs in train.en/train.de, the rest in valid.en/valid.de.
tiny_corpus() {
    awk -v total="$1" -v ntrain="$2" 'BEGIN {
        srand(7);
        for (i = 0; i < total; i++) {
            n = 3 + int(rand() * 6); s = ""; t = "";
            for (j = 0; j < n; j++) {
                w = ""; L = 2 + int(rand() * 4);
                for (k = 0; k < L; k++) w = w sprintf("%c", 97 + int(rand() * 12));
                s = s (j ? " " : "") w; t = toupper(w) (j ? " " : "") t;
            }
            f = i < ntrain ? "train" : "valid";
            print s > (f ".en"); print t > (f ".de");
        }
    }'
}
# The data and model of the tests that train for a few dozen updates (2+2 layers of D 32, every
# dropout on) in cfg.yaml; the test appends its own train: and decode: sections.
dropout_model_config() {
    cat > cfg.yaml <<YAML
data:
  dir: data
  train: [{src: train.en, tgt: train.de}]
  valid: [{src: valid.en, tgt: valid.de}]
  vocab_size: 300
  spm_input_sentences: 0
model: {d_model: 32, heads: 4, ffn: 64, enc_layers: 2, dec_layers: 2, dropout: 0.1,
        attention_dropout: 0.1, ffn_dropout: 0.1}
YAML
}
# cfg.yaml: a tiny model (D 32, 1+1 layers, 2 updates) on tiny_corpus's files, trained into
# run/; tests change it with --set.
tiny_config() {
    cat > cfg.yaml <<YAML
data: {dir: data, train: [{src: train.en, tgt: train.de}], valid: [{src: valid.en, tgt: valid.de}],
       vocab_size: 300, spm_input_sentences: 0}
model: {d_model: 32, heads: 4, ffn: 64, enc_layers: 1, dec_layers: 1}
train: {run_dir: run, batch_tokens: 300, max_updates: 2, save_freq: 2, valid_freq: 2, threads: 1}
decode: {max_len_a: 1.2, max_len_b: 4, valid_beam: 1}
YAML
}
