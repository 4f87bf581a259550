"""The contrast guard: names that look like opposite variants never merge by similarity (R3.3).

Why. On the bundled multilingual embedder (bench/bench_merge_threshold.py, results in
bench/results/merge_threshold.md) the design's similarity merge joins concepts that differ by a
prefix: prokaryotic / eukaryotic cell (cosine 0.99), endocytosis / exocytosis (0.96),
endosymbiosis / symbiosis (0.92), aerobic / anaerobic respiration (0.91), active / passive
transport (0.86), hypotonic / hypertonic solution (0.86). Their names differ in a few letters
that carry the whole meaning, and the embedding barely sees them. No threshold fixes it: those
pairs score as high as the cross-language names that must merge (trasporto attivo 0.95,
fotosintesi 0.94, diffusione 0.87).

The rule, on two canonical keys, word by word. Drop the words the two keys share; a word found
only in one key and a word found only in the other contrast when

1. they end with the same CONTRAST_MIN_SHARED_ENDING letters or more (the shared stem: -karyotic,
   -cytosis, -symbiosis, -aerobic, -ive, -tonic), and
2. what comes before that ending (each word's head) is short, at most CONTRAST_MAX_HEAD letters,
   as a prefix is (pro / eu, endo / ex, an-, endo-, hypo / hyper, act / pass), and
3. the two heads are at least two edits apart (insert, delete or change one letter each).

Two keys contrast when some such pair of words does. Key equality still merges: the guard only
stops a merge by similarity.

What each condition keeps merging. (1) cell / cellular, diffusion / diffusione: no shared ending
of 3 letters. (2) photosynthesis / fotosíntesis share "esis", but the heads (photosynth,
fotosínt) are a different spelling of the whole stem, not a prefix. (3) one letter apart is a
spelling: diffusion / difusion (heads "dif" / "di"), osmosis / ósmosis ("o" / "ó"), activo /
attivo ("act" / "att"); a one-letter prefix is too (the cost: atypical / typical is not caught).
A qualified name keeps merging with the bare one because no word is left to pair: nucleus /
cell nucleus. Every pair of bench/merge_pairs.json that names one concept passes the guard.

Known limits. The rule was written after seeing those pairs, so the bench's figures with the
guard are not a held-out measurement. Transliterations that change two letters before a long
shared ending look like prefixes and stay apart: Fotosynthese / Photosynthese ("f" / "ph"),
Zytoplasma / citoplasma ("zy" / "ci"); that costs a duplicate node, not a wrong merge. Contrasts
at the end of a word (hydrophobic / hydrophilic) or by a separate word (osmosis / reverse
osmosis) are not caught. Articles are the canonical key's business: a key that kept an attached
article (Arabic al-, Italian l') would look like a prefixed variant of the bare name.
"""

from __future__ import annotations

# Two words contrast only if they end with at least this many of the same letters. Three is the
# shortest stem of the observed opposites (act-ive / pass-ive).
CONTRAST_MIN_SHARED_ENDING = 3

# Longest head (the letters before the shared ending) that can be a prefix. Five covers hyper-,
# intra-, extra-, micro-; a longer head is another spelling of the stem.
CONTRAST_MAX_HEAD = 5


def contrasting(key_a: str, key_b: str) -> bool:
    """True when canonical keys `key_a` and `key_b` look like contrasting variants (see above)."""
    words_a, words_b = set(key_a.split()), set(key_b.split())
    only_a, only_b = words_a - words_b, words_b - words_a
    return any(contrasting_words(a, b) for a in only_a for b in only_b)


def contrasting_words(a: str, b: str) -> bool:
    """True when two different words share a stem and start with different prefixes."""
    if a == b:
        return False
    shared = _shared_ending(a, b)
    if shared < CONTRAST_MIN_SHARED_ENDING:
        return False
    head_a, head_b = a[: len(a) - shared], b[: len(b) - shared]
    if max(len(head_a), len(head_b)) > CONTRAST_MAX_HEAD:
        return False
    return not _within_one_edit(head_a, head_b)


def _shared_ending(a: str, b: str) -> int:
    length = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        length += 1
    return length


def _within_one_edit(a: str, b: str) -> bool:
    if len(a) > len(b):
        a, b = b, a
    if len(b) - len(a) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    # b is one letter longer: dropping its first differing letter must leave a.
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return a[i:] == b[i + 1 :]
    return True
