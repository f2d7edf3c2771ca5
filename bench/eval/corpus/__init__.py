"""The generator of the evaluation corpora: bench/eval/make_corpus.py runs it."""
