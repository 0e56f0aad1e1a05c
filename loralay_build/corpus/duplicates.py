"""No paper twice: duplicate documents found by PDF hash, by text, and by MinHash/LSH.

The same paper reaches a run under several ids (SciELO lists one article in two
collections, HAL holds a preprint and its published version, arXiv-Lay, PubMed-Lay and
HAL overlap); one copy in train and one in test is test data in training. So every
document gets a *print* of its body words (after abstract removal) in the per-document
worker, and the corpus-wide finish groups the prints before the filters and splits:

- `same_pdf`: equal PDF sha256;
- `same_text`: equal exact key (BLAKE2b of the normalised word sequence), abstracts agreeing;
- `near`: a MinHash/LSH candidate whose estimated Jaccard similarity of word 5-shingle
  sets is at least `THRESHOLD` (0.5; docs/duplicates.md has the measurements), abstracts
  agreeing.

The abstracts (each document's summary, printed with its body) agree when their estimated
Jaccard is at least `ABSTRACT_THRESHOLD` (0.7), or when either is unknown: two papers of
one template share their boilerplate, so their bodies look like copies, but not their
abstracts.

Groups are transitive (a ~ b ~ c is one group). In each group one document is kept: the
earliest dated (a date of lower precision sorts as the start of its period, as for the
chronological split), undated ones last, then the smallest id; every other member is a
`duplicate` of the kept id with the kind and similarity of its link to it. The decisions
depend only on the set of rows, never on their order, PYTHONHASHSEED or worker count.

Bodies of fewer than `MIN_WORDS` normalised words never enter the LSH: two empty or
near-empty bodies say nothing about being the same paper, unless their abstracts are the
same text too and the two together reach `MIN_WORDS` words (`same_text`).

`DuplicateDetector.exclude` takes the prints of other built datasets (`dataset.py`
`exclude_datasets` reads them); a run document that is a same-text or near duplicate of
one of them is dropped, with that dataset and id.

The prints compared are `corpus/prints.py`'s.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ..failures import Failure, FailureClass
from .prints import MIN_WORDS, MULT, NUM_PERM, U64, DocPrint, ExternalPrint, fmix64
from .split import date_key

# -- parameters (docs/duplicates.md: why these values) -----------------------------------
THRESHOLD = 0.5  # estimated Jaccard of shingle sets at or above which two bodies are one paper
# ... and of the abstracts' shingle sets at or above which two abstracts are one text: a near
# pair of bodies is one paper only when their abstracts agree too (two papers of one
# template share their boilerplate, not their abstracts: docs/duplicates.md)
ABSTRACT_THRESHOLD = 0.7
# LSH: 42 bands of 3 values (126 of the 128); a pair is a candidate when one band is equal,
# P = 1 - (1 - J^3)^42: 0.996 at J = 0.5, 0.94 at 0.4, 0.041 at 0.1, 0.005 at 0.05
BANDS, ROWS = 42, 3

SAME_PDF, SAME_TEXT, NEAR = "same_pdf", "same_text", "near"
KINDS = (SAME_PDF, SAME_TEXT, NEAR)  # strongest evidence first
_RANK = {k: i for i, k in enumerate(KINDS)}
_BLOCK = 4096  # the detector's signatures grow by blocks of 2 MB
_PAIRS = 4096  # candidate pairs compared at a time: two (4096, 128) gathers of 2 MB


# -- the detector ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Why a document is dropped: it duplicates `kept` (a document of this run, or of the
    excluded dataset `dataset`), by `kind` with `similarity` (1.0 for same_pdf and
    same_text). `via`: the member of its group it is linked to, when that is not `kept`."""

    doc_id: str
    kept: str
    kind: str
    similarity: float
    via: str | None = None
    dataset: str | None = None

    def message(self) -> str:
        def what(kind: str, other: str) -> str:
            if kind == NEAR:
                return f"near-duplicate (estimated Jaccard {self.similarity:.2f}) of {other}"
            return f"{'same PDF' if kind == SAME_PDF else 'same text'} as {other}"

        kept = f"{self.kept} of the excluded dataset {self.dataset}" if self.dataset \
            else f"{self.kept}, which is kept"
        if self.via is None:
            return what(self.kind, kept)
        return f"{what(self.kind, self.via)}, in one group with {kept}"

    def failure(self) -> Failure:
        return Failure(FailureClass.DUPLICATE, self.message())

    def to_json(self) -> dict[str, object]:
        return {"id": self.doc_id, "kept": self.kept, "kind": self.kind,
                "similarity": self.similarity, "via": self.via, "dataset": self.dataset}


@dataclass(frozen=True, slots=True)
class Group:
    """Documents of this run that are one paper: `kept` stays (None when the paper is in
    an excluded dataset, so none stays), the others are duplicates."""

    kept: str | None
    members: tuple[str, ...]  # sorted, `kept` included


@dataclass(frozen=True, slots=True)
class DuplicateDecisions:
    duplicates: dict[str, Duplicate]  # dropped id -> why, in id order
    groups: tuple[Group, ...]  # in order of their smallest member

    def to_json(self) -> list[dict[str, object]]:
        return [d.to_json() for d in self.duplicates.values()]


def keep_key(doc_id: str, publication_date: str | None) -> tuple[bool, str, str]:
    """The keep rule as a sort key, smallest kept: dated before undated, then the
    earliest (`split.date_key`: "2014" before "2014-03"), then the smallest id."""
    return (publication_date is None, date_key(publication_date) if publication_date
            else "", doc_id)


class _Parents:
    """Union-find over document indices (path halving; the smaller index is the root)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}  # every index ever joined, roots included

    def find(self, i: int) -> int:
        parent = self.parent
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def _band_hash(sigs: np.ndarray, rows: np.ndarray | slice, band: int) -> np.ndarray:
    """One uint64 hash per row of `sigs[rows]` of band `band`'s ROWS values."""
    with np.errstate(over="ignore"):
        vals = sigs[rows, band * ROWS:(band + 1) * ROWS].astype(U64)
        h = vals[:, 0] * MULT[0]
        for r in range(1, ROWS):
            h = h + vals[:, r] * MULT[r]
        return fmix64(h)


class _EqualRows:
    """The rows holding each value of a fixed-width byte column (rows without one left
    out), from one sort: a few arrays, no Python object per row."""

    def __init__(self, data: bytearray, width: int, present: bytearray) -> None:
        rows = np.flatnonzero(np.frombuffer(bytes(present), dtype=np.uint8))
        table = np.frombuffer(bytes(data), dtype=np.uint8).reshape(-1, width)
        values = np.ascontiguousarray(table[rows]).view(f"V{width}").ravel()
        order = np.argsort(values, kind="stable")  # equal values keep their row order
        self.rows = rows[order]  # grouped by value, each group by row
        self.values = values[order]
        new = np.concatenate(([True], self.values[1:] != self.values[:-1])) \
            if len(rows) else np.zeros(0, bool)
        self.starts = np.flatnonzero(new)
        self.width = width

    def firsts(self) -> np.ndarray:
        """The first row of each value, ascending."""
        return np.sort(self.rows[self.starts])

    def links(self) -> Iterator[tuple[int, int]]:
        """(first row of its value, row) for every other row."""
        marks = np.zeros(len(self.rows), dtype=np.int64)
        marks[self.starts] = 1
        first = self.rows[self.starts][np.cumsum(marks) - 1]
        later = first != self.rows
        yield from zip(first[later].tolist(), self.rows[later].tolist(), strict=True)

    def groups(self) -> Iterator[np.ndarray]:
        """The rows of each value held by more than one row."""
        sizes = np.diff(np.concatenate((self.starts, [len(self.rows)])))
        for start, size in zip(self.starts[sizes > 1].tolist(), sizes[sizes > 1].tolist()):
            yield np.sort(self.rows[start:start + size])

    def rows_of(self, value: bytes) -> list[int]:
        """The rows holding `value`, ascending."""
        if len(value) != self.width or not len(self.rows):
            return []
        q = np.frombuffer(value, dtype=np.uint8).view(f"V{self.width}")
        lo, hi = np.searchsorted(self.values, q, "left")[0], \
            np.searchsorted(self.values, q, "right")[0]
        return self.rows[lo:hi].tolist()


def _exact_ok(p: DocPrint) -> bool:
    """Whether a print may match another by its exact text: a body of MIN_WORDS words, or a
    shorter one whose abstract brings the words to MIN_WORDS (then the abstract must be
    the same, `DuplicateDetector._agree`): two near-empty bodies alone say nothing."""
    return p.words >= MIN_WORDS or (p.abstract_words > 0
                                    and p.words + p.abstract_words >= MIN_WORDS)


class DuplicateDetector:
    """Streams the run's rows in (`add`), then optionally other datasets' prints
    (`exclude`), and decides once (`decide`). Holds per document its id and date (the
    caller's own string objects), and in flat buffers its PDF hash, text key and the
    two 512-byte signatures (body, abstract): ~1.1 KB and no Python object of its own per
    document, so that
    the memory goes back whole when the detector is dropped (the finish writes the
    dataset after it), never the words."""

    def __init__(self, threshold: float = THRESHOLD) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {threshold}")
        self.threshold = threshold
        # equal values a pair needs: the estimate compared as an exact fraction
        self._need = int(np.ceil(threshold * NUM_PERM - 1e-9))
        self._need_abstract = int(np.ceil(ABSTRACT_THRESHOLD * NUM_PERM - 1e-9))
        self._ids: list[str] = []
        self._dates: list[str | None] = []
        self._sha = bytearray()  # 32 bytes a document (zeros: no hash) ...
        self._has_sha = bytearray()  # ... and whether it has one
        self._keys = bytearray()  # 16 bytes a document: the body's text key ...
        self._has_key = bytearray()  # ... and whether it may match (`_exact_ok`)
        self._long = bytearray()  # 1: a body of MIN_WORDS words or more (the LSH sees it)
        self._abstract_keys = bytearray()  # 16 bytes a document ...
        self._has_abstract = bytearray()  # ... and whether it has an abstract
        self._blocks: list[np.ndarray] = []  # signatures, body then abstract, _BLOCK rows
        self._fill = 0  # rows used in the last block
        self._seen: set[str] = set()
        self._texts: _EqualRows | None = None  # the rows of each text key, once made
        self._external: dict[int, tuple[tuple[int, float, str, str], Duplicate]] = {}
        self._index: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, doc_id: str, publication_date: str | None, pdf_sha256: str | None,
            fingerprint: DocPrint) -> None:
        """One row of the run: its id, date (`YYYY[-MM[-DD]]` or None), the PDF's sha256
        (or None) and the print the worker made."""
        if self._index is not None or self._arrays is not None or self._texts is not None:
            raise RuntimeError("add() after exclude() or decide(): they read the finished run")
        if doc_id in self._seen:
            raise ValueError(f"{doc_id}: added twice (ids are unique in a run)")
        if not isinstance(fingerprint, DocPrint):
            raise TypeError(f"{doc_id}: a DocPrint is needed, not {type(fingerprint).__name__}")
        try:
            sha = bytes.fromhex(pdf_sha256) if pdf_sha256 else bytes(32)
        except ValueError:
            sha = b""
        if len(sha) != 32:
            raise ValueError(f"{doc_id}: pdf_sha256 {pdf_sha256!r} is not a sha256 in hex")
        self._seen.add(doc_id)
        self._ids.append(doc_id)
        self._dates.append(publication_date or None)
        self._sha += sha
        self._has_sha.append(1 if pdf_sha256 else 0)
        self._keys += fingerprint.key
        self._has_key.append(_exact_ok(fingerprint))
        self._long.append(1 if fingerprint.words >= MIN_WORDS else 0)
        self._abstract_keys += fingerprint.abstract_key
        self._has_abstract.append(1 if fingerprint.abstract_words else 0)
        if not self._blocks or self._fill == len(self._blocks[-1]):
            self._blocks.append(np.empty((_BLOCK, 2 * NUM_PERM), dtype=np.uint32))
            self._fill = 0
        self._blocks[-1][self._fill, :NUM_PERM] = fingerprint.signature
        self._blocks[-1][self._fill, NUM_PERM:] = fingerprint.abstract_signature
        self._fill += 1

    def _text_rows(self) -> _EqualRows:
        """The documents of each body text key (those that may match by text)."""
        if self._texts is None:
            self._texts = _EqualRows(self._keys, 16, self._has_key)
        return self._texts

    def _exact_links(self) -> Iterator[tuple[int, int]]:
        """Same PDF: each document linked to the first with its bytes. Same text: the
        documents of one body text whose abstracts agree (`_agree`): each linked to the
        first of its body and abstract, then those firsts compared pairwise."""
        yield from _EqualRows(self._sha, 32, self._has_sha).links()
        body = np.frombuffer(bytes(self._keys), np.uint8).reshape(-1, 16)
        pair = np.concatenate([body, self._flags()[2]], axis=1)  # body and abstract keys
        same = _EqualRows(bytearray(pair.tobytes()), 32, self._has_key)
        yield from same.links()
        present = np.zeros(len(self._ids), np.uint8)
        present[same.firsts()] = 1
        texts = _EqualRows(self._keys, 16, bytearray(present.tobytes()))
        for group in texts.groups():
            i, j = np.triu_indices(len(group), k=1)
            for c in range(0, len(i), _PAIRS):
                a, b = group[i[c:c + _PAIRS]], group[j[c:c + _PAIRS]]
                ok = self._agree(a, b)
                yield from zip(a[ok].tolist(), b[ok].tolist(), strict=True)

    def _agree(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """For pairs of documents whose bodies match (same text, or near), whether their
        abstracts agree too: short bodies need the same abstract; other bodies an
        estimated Jaccard of the abstracts >= ABSTRACT_THRESHOLD, or an abstract unknown
        on either side (the body alone decides)."""
        sigs = self._signatures()
        has, long, keys = self._flags()
        known = has[a] & has[b]
        near = np.count_nonzero(sigs[a, NUM_PERM:] == sigs[b, NUM_PERM:], axis=1) \
            >= self._need_abstract
        same = np.all(keys[a] == keys[b], axis=1)
        return np.where(long[a] & long[b], ~known | near, known & same)

    def _flags(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(has an abstract, has a long body, abstract keys (n, 16)) as arrays, made once
        after the last `add`."""
        if self._arrays is None:
            self._arrays = (np.frombuffer(bytes(self._has_abstract), np.uint8).astype(bool),
                            np.frombuffer(bytes(self._long), np.uint8).astype(bool),
                            np.frombuffer(bytes(self._abstract_keys), np.uint8)
                            .reshape(-1, 16))
        return self._arrays

    def _lsh_rows(self) -> np.ndarray:
        """The documents the LSH sees: bodies long enough, and one per text (the other
        copies of a text have the same signature: the pairs found for the first are
        extended to them, `_members`; a thousand copies of one text would otherwise make
        one bucket of half a million pairs)."""
        firsts = self._text_rows().firsts()
        return firsts[self._flags()[1][firsts]]

    def _members(self, row: int) -> list[int]:
        """The documents of `row`'s body text."""
        return self._text_rows().rows_of(bytes(self._keys[16 * row:16 * row + 16]))

    def _lsh_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The LSH index of the run, made once after the last `add`: (rows, each band's
        hashes sorted (BANDS, n) uint64, the order that sorts them (BANDS, n) int32);
        ~12 bytes a band a document, 10 MB at 20k. Built band by band."""
        if self._index is None:
            rows = self._lsh_rows()
            sigs = self._signatures()  # the bands are of the body's values (< 2 * NUM_PERM)
            sorted_bands = np.empty((BANDS, len(rows)), dtype=U64)
            order = np.empty((BANDS, len(rows)), dtype=np.int32)
            for b in range(BANDS):
                h = _band_hash(sigs, rows, b)
                o = np.argsort(h, kind="stable")
                order[b], sorted_bands[b] = o, h[o]
            self._index = (rows, sorted_bands, order)
        return self._index

    def _signatures(self) -> np.ndarray:
        """Every signature as one (n, 2 * NUM_PERM) array (body, abstract), merged from the
        blocks once (each block is freed as soon as it is copied)."""
        n = len(self._ids)
        if len(self._blocks) == 1 and len(self._blocks[0]) == n:
            return self._blocks[0]
        out = np.empty((n, 2 * NUM_PERM), dtype=np.uint32)
        at = 0
        while self._blocks:
            block = self._blocks.pop(0)
            rows = min(len(block), n - at)
            out[at:at + rows] = block[:rows]
            at += rows
        self._blocks, self._fill = [out], n
        return out

    # -- exclusion ----------------------------------------------------------------------

    def exclude(self, prints: Iterable[ExternalPrint], batch: int = 1024) -> int:
        """Marks every document of the run that duplicates one of `prints` (same text or
        near; other datasets have no PDF hash), streaming: the prints are read in batches
        and never kept. Call after the last `add`. Returns how many prints were read."""
        self._lsh_index()
        seen = 0
        chunk: list[ExternalPrint] = []
        for ext in prints:
            chunk.append(ext)
            if len(chunk) == batch:
                self._exclude_batch(chunk)
                seen += len(chunk)
                chunk = []
        if chunk:
            self._exclude_batch(chunk)
            seen += len(chunk)
        return seen

    def _agrees_with(self, ext: DocPrint, i: int) -> bool:
        """`_agree` between another dataset's print and run document i."""
        if not (ext.abstract_words and self._has_abstract[i]):
            return bool(ext.words >= MIN_WORDS and self._long[i])
        if ext.words < MIN_WORDS or not self._long[i]:
            return ext.abstract_key == bytes(self._abstract_keys[16 * i:16 * i + 16])
        sig = self._signatures()[i, NUM_PERM:]
        return int(np.count_nonzero(ext.abstract_signature == sig)) >= self._need_abstract

    def _exclude_batch(self, chunk: list[ExternalPrint]) -> None:
        rows, sorted_bands, order = self._lsh_index()
        for ext in chunk:
            if _exact_ok(ext.fingerprint):
                for i in self._text_rows().rows_of(ext.fingerprint.key):
                    if self._agrees_with(ext.fingerprint, i):
                        self._note_external(i, ext, SAME_TEXT, 1.0)
        usable = [e for e in chunk if e.fingerprint.words >= MIN_WORDS]
        if not usable or not len(rows):
            return
        sigs = np.stack([e.fingerprint.signature for e in usable])
        pairs: list[np.ndarray] = []
        for b in range(BANDS):
            query = _band_hash(sigs, slice(None), b)
            lo = np.searchsorted(sorted_bands[b], query, side="left")
            hi = np.searchsorted(sorted_bands[b], query, side="right")
            for q in np.flatnonzero(hi > lo):
                found = rows[order[b, lo[q]:hi[q]]]
                pairs.append(np.stack([np.full(len(found), q), found], axis=1))
        if not pairs:
            return
        cand = np.unique(np.concatenate(pairs), axis=0)
        run_sigs = self._signatures()
        for c in range(0, len(cand), _PAIRS):
            part = cand[c:c + _PAIRS]
            equal = np.count_nonzero(sigs[part[:, 0]] == run_sigs[part[:, 1], :NUM_PERM],
                                     axis=1)
            ok = equal >= self._need
            for (q, i), e in zip(part[ok].tolist(), equal[ok].tolist()):
                for m in self._members(i):  # the other copies of the run's text
                    if self._agrees_with(usable[q].fingerprint, m):
                        self._note_external(m, usable[q], NEAR, e / NUM_PERM)

    def _note_external(self, i: int, ext: ExternalPrint, kind: str, sim: float) -> None:
        """Keeps, per run document, its strongest external match (order-independent)."""
        rank = (_RANK[kind], -sim, ext.dataset, ext.doc_id)
        old = self._external.get(i)
        if old is None or rank < old[0]:
            self._external[i] = (rank, Duplicate(self._ids[i], ext.doc_id, kind, sim,
                                                 dataset=ext.dataset))

    # -- decisions ----------------------------------------------------------------------

    def _near_pairs(self) -> np.ndarray:
        """LSH candidate pairs (i < j) of texts confirmed by the estimated Jaccard, as
        (m, 2), then extended to every copy of the two texts whose abstracts agree.
        Band by band: a band's candidates are confirmed before the next band is read, so
        memory holds one band's buckets, not every band's."""
        n = len(self._ids)
        rows, sorted_bands, orders = self._lsh_index()
        if len(rows) < 2:
            return np.zeros((0, 2), np.int64)
        sigs = self._signatures()
        found: list[np.ndarray] = []
        for b in range(BANDS):
            order, col = orders[b], sorted_bands[b]
            starts = np.flatnonzero(np.concatenate(([True], col[1:] != col[:-1])))
            sizes = np.diff(np.concatenate((starts, [len(col)])))
            codes: list[np.ndarray] = []
            two = starts[sizes == 2]
            if len(two):
                a, c = rows[order[two]], rows[order[two + 1]]
                codes.append(np.minimum(a, c) * n + np.maximum(a, c))
            for start, size in zip(starts[sizes > 2].tolist(), sizes[sizes > 2].tolist()):
                members = np.sort(rows[order[start:start + size]])
                i, j = np.triu_indices(size, k=1)
                codes.append(members[i] * n + members[j])
            for part in codes:
                for c in range(0, len(part), _PAIRS):
                    chunk = part[c:c + _PAIRS]
                    i, j = chunk // n, chunk % n
                    equal = np.count_nonzero(sigs[i, :NUM_PERM] == sigs[j, :NUM_PERM],
                                             axis=1)
                    found.append(chunk[equal >= self._need])
        if not found:
            return np.zeros((0, 2), np.int64)
        confirmed = np.unique(np.concatenate(found))
        pairs = [np.stack([confirmed // n, confirmed % n], axis=1)]
        for x, y in pairs[0].tolist():
            copies_x, copies_y = self._members(x), self._members(y)
            if len(copies_x) > 1 or len(copies_y) > 1:  # copies of either text
                pairs.append(np.array([(u, v) for u in copies_x for v in copies_y], np.int64))
        every = np.concatenate(pairs)
        ok = np.zeros(len(every), bool)
        for c in range(0, len(every), _PAIRS):
            ok[c:c + _PAIRS] = self._agree(every[c:c + _PAIRS, 0], every[c:c + _PAIRS, 1])
        return every[ok]

    def _link(self, i: int, j: int) -> tuple[int, float] | None:
        """The strongest direct evidence that documents i and j are one paper:
        (kind rank, similarity), or None."""
        if self._has_sha[i] and self._has_sha[j] and \
                self._sha[32 * i:32 * i + 32] == self._sha[32 * j:32 * j + 32]:
            return _RANK[SAME_PDF], 1.0
        if not (self._has_key[i] and self._has_key[j]) or \
                not self._agree(np.array([i]), np.array([j]))[0]:
            return None
        if self._keys[16 * i:16 * i + 16] == self._keys[16 * j:16 * j + 16]:
            return _RANK[SAME_TEXT], 1.0
        if not (self._long[i] and self._long[j]):
            return None
        sigs = self._signatures()
        equal = int(np.count_nonzero(sigs[i, :NUM_PERM] == sigs[j, :NUM_PERM]))
        return (_RANK[NEAR], equal / NUM_PERM) if equal >= self._need else None

    def _best_link(self, m: int, others: list[int]) -> tuple[int, float, int]:
        """m's strongest link into `others`: (kind rank, similarity, index); ties go to
        the smaller id."""
        best: tuple[int, float, str, int] | None = None
        for x in others:
            link = self._link(m, x)
            if link is not None:
                cand = (link[0], -link[1], self._ids[x], x)
                if best is None or cand < best:
                    best = cand
        assert best is not None, "a group member without a link (a bug)"
        return best[0], -best[1], best[3]

    def decide(self, first: Container[str] = frozenset()) -> DuplicateDecisions:
        """Groups, the kept document of each, and every other member's `Duplicate`.
        `first`: ids kept before all others (a refresh's documents already in the dataset:
        an old paper wins against any new copy of it, even an older one)."""
        parents = _Parents()
        for i, j in self._exact_links():
            parents.union(i, j)
        for i, j in self._near_pairs().tolist():
            parents.union(i, j)
        members: dict[int, list[int]] = {}
        for i in set(parents.parent) | set(self._external):
            members.setdefault(parents.find(i), []).append(i)
        duplicates: dict[str, Duplicate] = {}
        groups: list[Group] = []
        for group in members.values():
            group.sort(key=lambda i: self._ids[i])
            outside = [self._external[i] for i in group if i in self._external]
            if outside:  # the paper is in an excluded dataset: no member stays
                anchor = min(outside, key=lambda o: o[0])[1]
                for m in group:
                    if m in self._external:
                        duplicates[self._ids[m]] = self._external[m][1]
                        continue
                    rank, sim, x = self._best_link(m, [x for x in group if x != m])
                    duplicates[self._ids[m]] = Duplicate(
                        self._ids[m], anchor.kept, KINDS[rank], sim, via=self._ids[x],
                        dataset=anchor.dataset)
                groups.append(Group(None, tuple(self._ids[i] for i in group)))
                continue
            kept = min(group, key=lambda i: (self._ids[i] not in first,
                                             *keep_key(self._ids[i], self._dates[i])))
            for m in group:
                if m == kept:
                    continue
                direct = self._link(m, kept)
                if direct is not None:
                    duplicates[self._ids[m]] = Duplicate(
                        self._ids[m], self._ids[kept], KINDS[direct[0]], direct[1])
                    continue
                rank, sim, x = self._best_link(m, [x for x in group if x not in (m, kept)])
                duplicates[self._ids[m]] = Duplicate(
                    self._ids[m], self._ids[kept], KINDS[rank], sim, via=self._ids[x])
            groups.append(Group(self._ids[kept], tuple(self._ids[i] for i in group)))
        groups.sort(key=lambda g: g.members[0])
        return DuplicateDecisions(dict(sorted(duplicates.items())), tuple(groups))


def detect(rows: Iterable[tuple[str, str | None, str | None, DocPrint]],
           exclude: Iterable[ExternalPrint] = (), threshold: float = THRESHOLD
           ) -> DuplicateDecisions:
    """The whole detection in one call: `rows` streamed into a `DuplicateDetector`, then
    `exclude` (e.g. `dataset.exclude_datasets(folders)`), then the decisions."""
    detector = DuplicateDetector(threshold)
    for row in rows:
        detector.add(*row)
    detector.exclude(exclude)
    return detector.decide()
