"""Derive ``pymc_partitions/datasets/lee_news.csv`` from gensim's copy of the Lee news corpus.

The corpus is ``gensim/test/test_data/lee_background.cor`` of the gensim
package on PyPI (gensim 4.4.0; ``pip install gensim``, or ``pip download
gensim --no-deps`` and unzip): 300 news documents, one per line, from Lee,
Pincombe & Welsh (2005).  Processing, in this order: lower case; tokens are
runs of the letters a-z; drop tokens shorter than 3 letters and the stop words
below; keep the words that occur in at least 5 and at most 150 documents, and
of those the 400 of highest document frequency (ties by the word); count each
kept word per document.  The output is ``document,word,count`` rows (only
nonzero counts).

Run:  python benchmarks/derive_lee_news.py [path/to/lee_background.cor]
"""

import collections
import os
import re
import sys

STOP_WORDS = set(
    """about above after again against all also among and any are around because been before being below between both
    but can could did does doing down during each even ever every few for from further had has have having her here hers
    herself him himself his how however into its itself just last least less made make many may might more most much
    must near need never new next not now off once one only onto other others our ours ourselves out over own per
    put said same say says see seen several she should since some still such than that the their theirs them
    themselves then there these they this those though three through thus told too two under until upon very was were
    what when where whether which while who whom whose why will with within without would year years yet you your
    yours yourself yourselves today yesterday week weeks""".split()
)


def main():
    if len(sys.argv) > 1:
        path = sys.argv[1]
    else:
        from importlib import resources

        path = str(resources.files("gensim.test").joinpath("test_data/lee_background.cor"))
    with open(path, encoding="utf-8") as handle:
        documents = [line for line in handle.read().splitlines() if line.strip()]
    tokens = [[t for t in re.findall(r"[a-z]+", d.lower()) if len(t) >= 3 and t not in STOP_WORDS] for d in documents]
    frequency = collections.Counter(w for doc in tokens for w in set(doc))
    eligible = [w for w, f in frequency.items() if 5 <= f <= 150]
    vocabulary = sorted(sorted(eligible), key=lambda w: -frequency[w])[:400]
    keep = set(vocabulary)
    out = os.path.join(os.path.dirname(__file__), "..", "pymc_partitions", "datasets", "lee_news.csv")
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("document,word,count\n")
        for d, doc in enumerate(tokens):
            for word, count in sorted(collections.Counter(t for t in doc if t in keep).items()):
                handle.write(f"{d},{word},{count}\n")
    print(f"{len(documents)} documents, {len(vocabulary)} words -> {out}")


if __name__ == "__main__":
    main()
