"""Each document's print for duplicate detection: an exact key of its normalised body
words, a MinHash of their 5-shingles, and the same of its abstract (`DocPrint`), made in
the per-document worker; and `ExternalPrint`, a print of another built dataset's document.

The normalisation, per word: NFKC, case and accents folded (`strip.normalise.fold`, the
abstract matcher's folding), only letters and digits kept, pure punctuation dropped, and a
word printed with a line-end hyphen joined to the next one ("exam-" "ple" and "example"
agree, so a re-typeset copy with other line breaks, ligatures or a new cover page still
matches). `PRINT_VERSION` names the format; the detector that compares prints is
`corpus/duplicates.py`, the reader of other datasets' prints `dataset.py`.
"""

from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ..strip.normalise import word_keys

if TYPE_CHECKING:
    from datasketch import MinHash

# -- parameters (docs/duplicates.md: why these values) -----------------------------------
SHINGLE = 5  # words per shingle
NUM_PERM = 128  # MinHash permutations: 512 bytes a document, std. error 0.044 at J = 0.5
SEED = 1  # datasketch's permutation seed: part of the print's format
MIN_WORDS = 50  # bodies with fewer normalised words are matched by PDF hash only
PRINT_VERSION = "dp2"  # bumped whenever the normalisation or a parameter above changes

U64 = np.uint64
# odd 64-bit multipliers (splitmix/xxhash/murmur constants): one per shingle position
MULT = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                  0x27D4EB2F165667C5, 0x85EBCA77C2B2AE63, 0xFF51AFD7ED558CCD,
                  0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9,
                  0x2545F4914F6CDD1D], dtype=U64)
_CHAR_BASE = U64(0x100000001B3)  # FNV's 64-bit prime: the byte polynomial's base
_LEN_MULT = U64(0x9E3779B97F4A7C15)
_SEP = "\x01"  # never in a word key (keys hold only letters and digits)
# a word ending with one of these runs on into the next (`exam-` `ple`: `example`)
_HYPHENS = np.array([ord(c) for c in "-\u2010\u2011\u00ad"], dtype=np.uint32)
_CHUNK = 2048  # shingles per MinHash update: a (2048, 128) uint32 scratch of 1 MB


def fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, elementwise (wrapping uint64 arithmetic)."""
    h = h ^ (h >> U64(33))
    h = h * U64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> U64(33))
    h = h * U64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> U64(33))


@lru_cache(maxsize=8)
def _powers(n: int) -> np.ndarray:
    """_CHAR_BASE ** j mod 2^64 for j < n (n a power of two, so few sizes are cached)."""
    with np.errstate(over="ignore"):
        return np.cumprod(np.concatenate(([U64(1)], np.full(n - 1, _CHAR_BASE, U64))),
                          dtype=U64)


def prepare_prints() -> None:
    """Make what every print needs once, ahead (a worker does so before its memory cap:
    datasketch's import maps ~160 MB of address space, which no document should pay)."""
    _permutations()


@lru_cache(maxsize=1)
def _permutations() -> np.ndarray:
    """datasketch's permutation parameters for (NUM_PERM, SEED), made once per process."""
    return _minhash_class()(num_perm=NUM_PERM, seed=SEED).permutations


def _minhash_class() -> type[MinHash]:
    """datasketch's MinHash, imported when a print is made: its package imports SciPy
    (~40 MB of RSS, 0.3 s), which a finish without `exclude_datasets` never needs."""
    from datasketch import MinHash

    return MinHash


def _normalised(words: Sequence[str], keys: Sequence[str] | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """The normalised body as (UTF-8 bytes of its words back to back, word lengths).

    A word is its key (`strip.normalise.word_keys`: NFKC, case and accents folded, only
    letters and digits: the abstract matcher's rule, so one rule says when two words are
    the same), a word printed with a line-end hyphen runs on into the next one, and words
    left empty (pure punctuation) are not words. `keys`: the words' keys when the caller
    has them (the strip step hands on the body's), else they are made here."""
    if keys is None:
        keys = word_keys(list(words))
    if len(keys) != len(words):
        raise ValueError(f"{len(keys)} keys for {len(words)} words")
    raw = np.frombuffer(_SEP.join(keys).encode("utf-8"), dtype=np.uint8)
    seps = np.flatnonzero(raw == 1)  # keys hold only letters and digits: one per boundary
    data = np.delete(raw, seps)
    boundaries = seps - np.arange(len(seps))  # where word i + 1 starts in `data`
    starts = np.concatenate(([0], boundaries[~_ends_with_hyphen(words)]))
    lengths = np.diff(np.concatenate((starts, [len(data)])))
    return data, lengths[lengths > 0]


def _ends_with_hyphen(words: Sequence[str]) -> np.ndarray:
    """For each word but the last, whether it ends with a hyphen (one vectorised pass over
    the text's code points instead of a Python call per word)."""
    if len(words) < 2:
        return np.zeros(0, bool)
    joined = _SEP.join(words)
    if joined.count(_SEP) != len(words) - 1:  # a word holding the separator itself
        joined = _SEP.join(w.replace(_SEP, "") for w in words)
    points = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    seps = np.flatnonzero(points == 1)
    before = points[np.maximum(seps - 1, 0)]
    return (seps > 0) & np.isin(before, _HYPHENS)


def _word_hashes(data: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each word: the polynomial of its bytes, length-mixed, finalised."""
    if not len(lengths):
        return np.zeros(0, U64)
    starts = np.concatenate(([0], np.cumsum(lengths[:-1])))
    pos = np.arange(len(data), dtype=np.int64) - np.repeat(starts, lengths)
    size = 1 << max(0, int(lengths.max()) - 1).bit_length()
    with np.errstate(over="ignore"):
        poly = np.add.reduceat(data.astype(U64) * _powers(size)[pos], starts, dtype=U64)
        return fmix64(poly + lengths.astype(U64) * _LEN_MULT)


def shingle_hashes(words: Sequence[str], size: int = SHINGLE) -> np.ndarray:
    """The sorted set of 32-bit hashes of the body's word `size`-shingles (a body of
    fewer words is one shingle of all of them; an empty body has none)."""
    return _shingles(*_normalised(words), size)


def _shingles(data: np.ndarray, lengths: np.ndarray, size: int = SHINGLE) -> np.ndarray:
    w = _word_hashes(data, lengths)
    n = len(w)
    if n == 0:
        return np.zeros(0, np.uint32)
    k = min(size, n)
    m = n - k + 1
    with np.errstate(over="ignore"):
        h = w[:m] * MULT[0]
        for j in range(1, k):
            h = h + w[j:j + m] * MULT[j % len(MULT)]
        h = fmix64(h)
    # the set: sort and drop repeats (np.unique's hash path was 20x slower here)
    out = np.sort((h >> U64(32)).astype(np.uint32))
    return out[np.concatenate(([True], out[1:] != out[:-1]))]


def _identity(x: int) -> int:
    return x


@dataclass(frozen=True, slots=True, eq=False)
class DocPrint:
    """What the worker keeps of a body for duplicate detection (~530 bytes).

    `key`: BLAKE2b-128 of the normalised word sequence; `signature`: the MinHash of its
    word shingles (NUM_PERM uint32); `words`: how many normalised words it has. The
    `abstract_*` fields are the same three of the document's abstract (its summary;
    `abstract_words` 0: none known). `to_str`/`from_str` give the form the run state's
    JSON summary stores (1,424 characters: `dp2.` and the base64 of `to_bytes`)."""

    key: bytes
    signature: np.ndarray
    words: int
    abstract_key: bytes = bytes(16)
    abstract_signature: np.ndarray | None = None  # None: no abstract (all values maximal)
    abstract_words: int = 0

    def __post_init__(self) -> None:
        for name in ("signature", "abstract_signature"):
            value = getattr(self, name)
            if value is None:
                value = np.full(NUM_PERM, np.iinfo(np.uint32).max, np.uint32)
            sig = np.array(value, copy=True)  # read-only below: never the caller's
            if sig.shape != (NUM_PERM,) or sig.dtype != np.uint32:
                raise ValueError(f"a DocPrint needs {NUM_PERM} uint32 values for its "
                                 f"{name}, not {sig.dtype}{sig.shape}")
            sig.setflags(write=False)
            object.__setattr__(self, name, sig)
        if len(self.key) != 16 or len(self.abstract_key) != 16:
            raise ValueError(f"a DocPrint needs 16-byte keys, not {len(self.key)} and "
                             f"{len(self.abstract_key)} bytes")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DocPrint):
            return NotImplemented
        return (self.key == other.key and self.words == other.words
                and np.array_equal(self.signature, other.signature)
                and self.abstract_key == other.abstract_key
                and self.abstract_words == other.abstract_words
                and np.array_equal(np.asarray(self.abstract_signature),
                                   np.asarray(other.abstract_signature)))

    __hash__ = None  # type: ignore[assignment]

    def similarity(self, other: DocPrint) -> float:
        """Estimated Jaccard similarity of the two shingle sets (share of equal values)."""
        return int(np.count_nonzero(self.signature == other.signature)) / NUM_PERM

    def abstract_similarity(self, other: DocPrint) -> float:
        """Estimated Jaccard similarity of the two abstracts' shingle sets."""
        return int(np.count_nonzero(self.abstract_signature == other.abstract_signature)
                   ) / NUM_PERM

    def to_bytes(self) -> bytes:
        assert self.abstract_signature is not None  # made in __post_init__
        return (struct.pack("<I", self.words) + self.key
                + self.signature.astype("<u4", copy=False).tobytes()
                + struct.pack("<I", self.abstract_words) + self.abstract_key
                + self.abstract_signature.astype("<u4", copy=False).tobytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> DocPrint:
        half = 4 + 16 + 4 * NUM_PERM
        if len(data) != 2 * half:
            raise ValueError(f"a DocPrint is {2 * half} bytes, not {len(data)}")
        (words,) = struct.unpack_from("<I", data)
        (abstract_words,) = struct.unpack_from("<I", data, half)
        sig = np.frombuffer(data, dtype="<u4", offset=20, count=NUM_PERM).astype(np.uint32)
        abstract = np.frombuffer(data, dtype="<u4", offset=half + 20).astype(np.uint32)
        return cls(bytes(data[4:20]), sig, words, bytes(data[half + 4:half + 20]), abstract,
                   abstract_words)

    def to_str(self) -> str:
        return PRINT_VERSION + "." + base64.urlsafe_b64encode(self.to_bytes()).decode("ascii")

    @classmethod
    def from_str(cls, text: str) -> DocPrint:
        version, _, body = text.partition(".")
        if version != PRINT_VERSION:
            raise ValueError(f"a DocPrint of format {version!r}, this build reads "
                             f"{PRINT_VERSION!r}: the document must be printed again")
        try:
            data = base64.urlsafe_b64decode(body.encode("ascii"))
        except (ValueError, UnicodeEncodeError) as e:
            raise ValueError(f"a DocPrint's text is not base64: {e}") from None
        return cls.from_bytes(data)


def doc_print(words: Sequence[str], keys: Sequence[str] | None = None,
              abstract: Sequence[str] = ()) -> DocPrint:
    """The print of a body (`Document.words` after abstract removal) and of its abstract
    (the summary's words; none: compared by the body alone); `keys`: the body words'
    keys (`word_keys`), when the caller has them."""
    key, sig, n = _text_print(words, keys, MIN_WORDS)
    abstract_key, abstract_sig, abstract_n = _text_print(abstract, None, 1)
    return DocPrint(key, sig, n, abstract_key, abstract_sig, abstract_n)


def _text_print(words: Sequence[str], keys: Sequence[str] | None, min_words: int
                ) -> tuple[bytes, np.ndarray, int]:
    """(exact key, MinHash of the shingles (none below `min_words` words), word count)."""
    data, lengths = _normalised(words, keys)
    key = hashlib.blake2b(data.tobytes() + lengths.astype("<u4").tobytes(),
                          digest_size=16).digest()
    m = _minhash_class()(num_perm=NUM_PERM, seed=SEED, hashfunc=_identity,
                permutations=_permutations(), scheme="affine32")
    if len(lengths) >= min_words:
        shingles = _shingles(data, lengths)
        for i in range(0, len(shingles), _CHUNK):
            m.update_batch(shingles[i:i + _CHUNK].tolist())
    return key, m.hashvalues.astype(np.uint32, copy=True), int(len(lengths))





@dataclass(frozen=True, slots=True)
class ExternalPrint:
    """A document of another built dataset (`exclude_datasets`)."""

    dataset: str  # the folder, as the user named it
    doc_id: str
    fingerprint: DocPrint
