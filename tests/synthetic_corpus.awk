# synthetic_corpus.awk: a small parallel corpus for the training tests, written to the current
# directory: made-up words, the target reverses the source and upper-cases it; 600 pairs in
# train.en/train.de, 100 in valid.en/valid.de. Run as `awk -f synthetic_corpus.awk`.
BEGIN {
    srand(7);
    for (i = 0; i < 700; i++) {
        n = 3 + int(rand() * 6); s = ""; t = "";
        for (j = 0; j < n; j++) {
            w = ""; L = 2 + int(rand() * 4);
            for (k = 0; k < L; k++) w = w sprintf("%c", 97 + int(rand() * 12));
            s = s (j ? " " : "") w; t = toupper(w) (j ? " " : "") t;
        }
        f = i < 600 ? "train" : "valid";
        print s > (f ".en"); print t > (f ".de");
    }
}
