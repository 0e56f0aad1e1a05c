"""`loralay eval DIR`: extractive baselines, or your model's outputs.

On a LoRaLay dataset: LEAD-k (the body's first sentences up to the abstract's length) and
the greedy extractive oracle (sentences added while ROUGE-1 + ROUGE-2 F1 rises), on the
body as `reading.text` gives it, sentences split per language.

Baselines (Mao et al. 2022, Table 5) on a CiteSum dataset, `src` sentences split with pysbd:
EXT-LEAD the first sentence; EXT-HEURISTIC the first containing "propose", "introduce" or
"in this paper" (else LEAD); EXT-ORACLE the sentence with the best ROUGE-2 F1 against `tgt`.
Scores are `rouge-score` F1 x 100 (stemming on), averaged over the split's examples, i.e. the
same numbers `RougeScorer(...).score(target=reference, prediction=candidate)` gives.
`--predictions` scores JSON lines {"id", "prediction"} against `tgt` (CiteSum) or `abstract`
(a LoRaLay dataset), and refuses a file whose ids are not exactly the split's. The scores
are written outside the dataset (`--out`, default the current folder).
Predictions and references go through one tokenizer (`rouge.py`), named in the output: a
CiteSum dataset rouge-score's own, as its gate and the paper's Table 5; a LoRaLay dataset,
in any of its languages, the Unicode one (rouge-score's drops Hangul and cuts accented words).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .atomic import write_text_atomic
from .dataset import Dataset
from .errors import ConfigError
from .extras import require
from .owned import describe_os_error
from .reading import text
from .rouge import ROUGE_SCORE, UNICODE, scorer
from .sentences import sentences_of

KEYS = ("rouge1", "rouge2", "rougeL")
PAPER_TABLE5 = {"lead": (21.94, 7.35, 17.36), "heuristic": (29.32, 12.53, 23.99),
                "oracle": (44.17, 27.22, 38.32)}
CUES = re.compile(r"propose|introduce|in this paper", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Split:
    """One split's rows in file order, and the tokenizer its kind of dataset is scored with."""

    ids: list[str]
    references: list[str]
    sources: list[str] | None  # CiteSum's `src`, what the baselines pick sentences from
    tokenizer: str
    bodies: list[str] | None = None  # a LoRaLay dataset's body text (`reading.text`)
    languages: list[str] | None = None


def load_split(dataset: Path, split: str) -> Split:
    ds = Dataset.open(dataset)
    files = ds.split(split)
    names = set(files[0][1].schema_arrow.names)
    if {"id", "src", "tgt"} <= names:
        rows = list(ds.rows(split, ("id", "src", "tgt")))
        return Split([r["id"] for r in rows], [r["tgt"] for r in rows],
                     [r["src"] for r in rows], ROUGE_SCORE)
    if {"article_id", "abstract"} <= names:
        body = [c for c in ("article_words", "article_line_ids", "article_block_ids",
                            "language") if c in names]
        ids, refs, bodies, langs = [], [], [], []
        for r in ds.rows(split, ("article_id", "abstract", *body)):
            ids.append(r["article_id"])
            refs.append(r["abstract"])
            if "article_words" in r:
                bodies.append(text(r) if "article_block_ids" in r
                              else " ".join(r["article_words"]))
            langs.append(r.get("language") or "en")
        return Split(ids, refs, None, UNICODE, bodies if "article_words" in names else None,
                     langs)
    raise ConfigError(f"{dataset}: neither a CiteSum (src/tgt) nor a LoRaLay (abstract) dataset")


class Rouge:
    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer
        self.scorer = scorer(KEYS, tokenizer)

    def f1(self, reference: str, candidate: str) -> dict[str, float]:
        s = self.scorer.score(target=reference, prediction=candidate)
        return {k: s[k].fmeasure for k in KEYS}


def sentences(body: str, language: str = "en") -> list[str]:
    """The body's sentences (`sentences.sentences_of`); a blank body is one empty one."""
    return sentences_of(body, language) or [body]


# the long-document baselines read this many sentences at most: the greedy oracle scores
# each of them once per sentence it adds
ORACLE_SENTENCES = 400


def lead_k(sents: list[str], ref: str, rouge: Rouge) -> str:
    """The body's first sentences, as many as reach the abstract's length in words (the
    LEAD-k of long-document summarization, k set by each reference)."""
    target, out, words = len(ref.split()), [], 0
    for sent in sents:
        if words >= target:
            break
        out.append(sent)
        words += len(sent.split())
    return " ".join(out)


def greedy_oracle(sents: list[str], ref: str, rouge: Rouge) -> str:
    """The extractive oracle of Nallapati et al. (2017): sentences added one at a time,
    each the one that raises ROUGE-1 + ROUGE-2 F1 most, until none raises it; in the
    body's order."""
    pool = sents[:ORACLE_SENTENCES]
    chosen: list[int] = []
    best = 0.0
    while True:
        gains = []
        for i in range(len(pool)):
            if i in chosen:
                continue
            cand = " ".join(pool[j] for j in sorted([*chosen, i]))
            f = rouge.f1(ref, cand)
            gains.append((f["rouge1"] + f["rouge2"], -i))
        if not gains:
            break
        score, neg = max(gains)
        if score <= best:
            break
        best = score
        chosen.append(-neg)
    return " ".join(pool[j] for j in sorted(chosen))


LONG_BASELINES: dict[str, Callable[[list[str], str, Rouge], str]] = {
    "lead_k": lead_k, "ext_oracle": greedy_oracle}


def lead(sents: list[str], ref: str, rouge: Rouge) -> str:
    return sents[0]


def heuristic(sents: list[str], ref: str, rouge: Rouge) -> str:
    return next((s for s in sents if CUES.search(s)), sents[0])


def oracle(sents: list[str], ref: str, rouge: Rouge) -> str:
    return max(sents, key=lambda s: rouge.f1(ref, s)["rouge2"])  # first of equals wins


BASELINES: dict[str, Callable[[list[str], str, Rouge], str]] = {
    "lead": lead, "heuristic": heuristic, "oracle": oracle}


def mean_f1(pairs: list[tuple[str, str]], rouge: Rouge) -> dict[str, float]:
    """(reference, candidate) pairs -> mean F1 x 100 per ROUGE kind."""
    totals = dict.fromkeys(KEYS, 0.0)
    for ref, cand in pairs:
        for k, v in rouge.f1(ref, cand).items():
            totals[k] += v
    return {k: 100 * v / max(1, len(pairs)) for k, v in totals.items()}


def read_predictions(path: Path, ids: list[str]) -> list[str]:
    """Predictions in the split's order; a missing, extra or repeated id is an error, as is
    a file that is not UTF-8 JSON lines of {"id", "prediction"} (one line naming it)."""
    if not path.is_file():
        raise ConfigError(f"{path}: {'not found' if not path.exists() else 'not a file'} "
                          "(--predictions takes a JSON-lines file)")
    found: dict[str, str] = {}
    for n, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            key, text = str(obj["id"]), obj["prediction"]
            if not isinstance(text, str):
                raise TypeError("prediction is not a string")
        except RecursionError:
            raise ConfigError(f"{path}: line {n}: JSON nested too deep") from None
        except (ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{path}: line {n}: not {{\"id\", \"prediction\"}} "
                              f"({str(e)[:100]})") from None
        if key in found:
            raise ConfigError(f"{path}: line {n}: id {key!r} given twice")
        found[key] = str(text)
    missing, extra = [i for i in ids if i not in found], sorted(set(found) - set(ids))
    if missing or extra:
        raise ConfigError(f"{path}: {len(missing)} ids of the split missing "
                          f"{missing[:3]}, {len(extra)} ids not in it {extra[:3]}")
    return [found[i] for i in ids]


def _lines(path: Path) -> Iterator[str]:
    """The file's lines as text; a byte that is not UTF-8 is an error naming its line."""
    try:
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                try:
                    yield raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ConfigError(f"{path}: line {n}: not UTF-8 (byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read ({e.strerror})") from None


def table(scores: dict[str, dict[str, float]], n: int, split: str, tokenizer: str) -> str:
    lines = [f"{split}: {n} examples; ROUGE F1 x 100 (rouge-score, stemming; tokenizer "
             f"{tokenizer})",
             f"{'system':<12}{'R-1':>8}{'R-2':>8}{'R-L':>8}   paper (Table 5) R-1/R-2/R-L"]
    for name, s in scores.items():
        paper = PAPER_TABLE5.get(name)
        beside = "/".join(f"{x:.2f}" for x in paper) if paper else "—"
        lines.append(f"{name:<12}{s['rouge1']:>8.2f}{s['rouge2']:>8.2f}{s['rougeL']:>8.2f}"
                     f"   {beside}")
    return "\n".join(lines)


def evaluate(dataset: Path, split: str = "test", predictions: Path | None = None
             ) -> dict[str, object]:
    """The scores as `eval-{split}.json` holds them (`predictions` instead of baselines)."""
    rows = load_split(dataset, split)
    ids, refs, srcs = rows.ids, rows.references, rows.sources
    scoring = Rouge(rows.tokenizer)
    if predictions is not None:
        preds = read_predictions(predictions, ids)
        return {"predictions": mean_f1(list(zip(refs, preds)), scoring), "examples": len(ids),
                "tokenizer": scoring.tokenizer}
    out: dict[str, object] = {}
    if srcs is None:  # a LoRaLay dataset: the long-document baselines, on the body
        if rows.bodies is None or rows.languages is None:
            raise ConfigError(f"{dataset}: no article_words column: the baselines need the "
                              "body; pass --predictions to score your outputs")
        split_bodies = [sentences(b, lang) for b, lang in zip(rows.bodies, rows.languages)]
        for name, pick in LONG_BASELINES.items():
            out[name] = mean_f1([(r, pick(ss, r, scoring))
                                 for r, ss in zip(refs, split_bodies)], scoring)
        out["examples"] = len(ids)
        out["tokenizer"] = scoring.tokenizer
        return out
    split_srcs = [sentences(s) for s in srcs]
    for name, pick in BASELINES.items():
        out[name] = mean_f1([(r, pick(ss, r, scoring)) for r, ss in zip(refs, split_srcs)],
                            scoring)
    out["examples"] = len(ids)
    out["tokenizer"] = scoring.tokenizer
    return out


def results_path(dataset: Path, split: str, predictions: Path | None,
                 out: Path | None) -> Path:
    """Where the scores go: `out`, else `eval-{dataset}-{split}[-predictions].json` in the
    current folder; never inside the dataset (a dataset folder holds what the build
    wrote, and a publish would upload a stray score file with it)."""
    name = f"eval-{dataset.resolve().name}-{split}{'-predictions' if predictions else ''}.json"
    target = out if out is not None else Path(name)
    root, where = dataset.resolve(), target.resolve()
    if where == root or root in where.parents:
        raise ConfigError(f"{target}: inside the dataset {dataset}; write the scores "
                          "elsewhere (--out FILE)")
    return target


def run_eval(dataset: Path, split: str = "test", predictions: Path | None = None,
             echo: Callable[[str], None] = print, out: Path | None = None) -> Path:
    """The scores' table through `echo`, then the scores written to `results_path`; a
    folder that cannot take the file is a ConfigError after the table, so the scores are
    never lost with it."""
    require("citesum", "`loralay eval`")  # ROUGE and the sentence splitter
    target = results_path(dataset, split, predictions, out)
    result = evaluate(dataset, split, predictions)
    scores = {k: v for k, v in result.items() if isinstance(v, dict)}
    echo(table(scores, len_examples(result), split, str(result["tokenizer"])))
    try:
        write_text_atomic(target, json.dumps(result, indent=1))
    except OSError as e:
        raise ConfigError(f"cannot write {target} ({describe_os_error(e)}); the "
                          "scores are above") from None
    return target


def len_examples(result: dict[str, Any]) -> int:
    examples = result["examples"]
    assert isinstance(examples, int)
    return examples
