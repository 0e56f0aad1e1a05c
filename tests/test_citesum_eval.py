"""`loralay eval`: the baselines' numbers equal rouge-score called directly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pysbd
import pytest
from rouge_score import rouge_scorer

from loralay_build.citesum.write import write_rows
from loralay_build.scoring import evaluate

from .conftest import REPO

ROWS = [
    ("a", "Deep nets are popular. We propose DeepFace for face verification. It works well.",
     "REF proposed DeepFace, a network for face verification."),
    ("b", "Summaries are short. Long documents are hard. In this paper we study attention.",
     "REF study sparse attention for long documents."),
    ("c", "Protein folding is slow. Yeast cells fold proteins in three states.",
     "REF found three folding states in yeast cells."),
]


def row(i: str, src: str, tgt: str) -> dict:
    return {"id": i, "src": src, "tgt": tgt, "paper_id": i, "title": None,
            "discipline": {"venue": None, "journal": None, "mag_field_of_study": []},
            "citing_paper_id": "0", "section": "Related Work", "sentence": tgt,
            "rouge1_recall": 1.0, "rouge2_recall": 1.0, "rougeL_recall": 1.0}


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    write_rows(tmp_path, {"test": [row(*r) for r in ROWS]}, 100)
    return tmp_path


def direct(pairs: list[tuple[str, str]]) -> dict[str, float]:
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    scores = [scorer.score(target=r, prediction=c) for r, c in pairs]
    return {k: 100 * sum(s[k].fmeasure for s in scores) / len(scores)
            for k in ("rouge1", "rouge2", "rougeL")}


def test_baselines_equal_rouge_score_called_directly(dataset):
    got = evaluate(dataset, "test")
    sents = [pysbd.Segmenter(language="en", clean=False).segment(src) for _, src, _ in ROWS]
    sents = [[s.strip() for s in ss] for ss in sents]
    refs = [tgt for *_, tgt in ROWS]
    assert got["examples"] == 3
    assert got["lead"] == pytest.approx(direct([(r, ss[0]) for r, ss in zip(refs, sents)]))
    heur = [sents[0][1], sents[1][2], sents[2][0]]  # "propose", "In this paper", LEAD
    assert got["heuristic"] == pytest.approx(direct(list(zip(refs, heur))))
    scorer = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True)
    best = [max(ss, key=lambda s, r=r: scorer.score(r, s)["rouge2"].fmeasure)
            for r, ss in zip(refs, sents)]
    assert got["oracle"] == pytest.approx(direct(list(zip(refs, best))))
    assert got["oracle"]["rouge2"] >= got["lead"]["rouge2"]


def test_cli_writes_json_and_table(dataset, tmp_path):
    here = tmp_path.parent / f"{tmp_path.name}-cwd"  # the dataset is tmp_path itself
    here.mkdir()
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "eval", str(dataset)],
                          cwd=here, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((here / f"eval-{dataset.name}-test.json").read_text())
    assert not list(dataset.glob("eval-*"))  # issue 46, 10: never inside the dataset
    assert set(saved) == {"lead", "heuristic", "oracle", "examples", "tokenizer"}
    assert saved["tokenizer"] == "rouge-score"  # CiteSum: its gate's and Table 5's
    assert "44.17/27.22/38.32" in proc.stdout and f"{saved['lead']['rouge1']:.2f}" in proc.stdout


def test_predictions_scored_and_ids_checked(dataset, tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "prediction": t}) + "\n"
                             for i, _, t in reversed(ROWS)))
    got = evaluate(dataset, "test", preds)
    assert got["predictions"] == pytest.approx({"rouge1": 100, "rouge2": 100, "rougeL": 100})
    preds.write_text(json.dumps({"id": "a", "prediction": "x"}) + "\n" +
                     json.dumps({"id": "z", "prediction": "x"}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "eval", str(dataset),
                           "--predictions", str(preds)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and "2 ids of the split missing" in proc.stderr
    assert "1 ids not in it ['z']" in proc.stderr


def test_predictions_on_a_loralay_dataset(tmp_path):
    (tmp_path / "data").mkdir()
    import pyarrow as pa

    pq.write_table(pa.table({"article_id": ["x1"], "abstract": ["a short abstract"]}),
                   tmp_path / "data" / "test-00000-of-00001.parquet")
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "x1", "prediction": "a short abstract"}) + "\n")
    assert evaluate(tmp_path, "test", preds)["predictions"]["rouge1"] == pytest.approx(100)


# one abstract and one other text per language the tool builds (issue 41 §8): rouge-score's
# default tokenizer keeps [a-z0-9] only, so the Korean copy scored 0 and accents cut words
ABSTRACTS = {
    "en": ("We propose a layout-aware summarizer for long scientific documents.",
           "Proteins fold in three states in yeast cells."),
    "fr": ("Nous étudions la fonte des glaciers des Alpes françaises à partir de données "
           "satellitaires.",
           "Les élèves préfèrent les méthodes numériques aux méthodes analytiques."),
    "es": ("Analizamos la evolución de la población rural en España durante el último siglo.",
           "Se describe un método de síntesis química más rápido y económico."),
    "pt": ("Avaliamos a eficácia da vacinação em regiões do Nordeste brasileiro com poucos "
           "recursos.",
           "Os autores descrevem a geologia das ilhas oceânicas do Atlântico."),
    "ko": ("본 연구는 한국어 과학 논문의 요약 데이터셋을 구축하고 레이아웃 정보를 활용한 요약 "
           "모델을 평가한다.",
           "이 논문은 해양 생태계의 변화를 관측한 결과를 보고한다."),
}


def loralay_split(tmp_path: Path, rows: dict[str, str]) -> Path:
    """A LoRaLay dataset's test split of {article_id: abstract}."""
    import pyarrow as pa

    (tmp_path / "data").mkdir(parents=True)
    pq.write_table(pa.table({"article_id": list(rows), "abstract": list(rows.values())}),
                   tmp_path / "data" / "test-00000-of-00001.parquet")
    return tmp_path


def predictions_file(path: Path, preds: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "prediction": t}, ensure_ascii=False) + "\n"
                            for i, t in preds.items()), encoding="utf-8")
    return path


@pytest.mark.parametrize("lang", sorted(ABSTRACTS))
def test_every_language_an_exact_copy_scores_100_and_another_text_less(tmp_path, lang):
    abstract, other = ABSTRACTS[lang]
    ds = loralay_split(tmp_path / "ds", {"x1": abstract})
    same = evaluate(ds, "test", predictions_file(tmp_path / "same.jsonl", {"x1": abstract}))
    assert same["predictions"] == pytest.approx({"rouge1": 100, "rouge2": 100, "rougeL": 100})
    assert same["tokenizer"] == "unicode"
    half = " ".join(abstract.split()[: len(abstract.split()) // 2])
    for text in (other, half):
        got = evaluate(ds, "test", predictions_file(tmp_path / "p.jsonl", {"x1": text}))
        assert all(v < 100 for v in got["predictions"].values()), (text, got)
    got = evaluate(ds, "test", predictions_file(tmp_path / "p.jsonl", {"x1": half}))
    assert got["predictions"]["rouge1"] > 0  # the words it shares count, Hangul included


def test_the_tokenizer_is_named_in_the_json_and_the_table(tmp_path):
    ds = loralay_split(tmp_path / "ds", {"x1": ABSTRACTS["ko"][0]})
    preds = predictions_file(tmp_path / "p.jsonl", {"x1": ABSTRACTS["ko"][0]})
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "eval", str(ds),
                           "--predictions", str(preds), "--out", str(tmp_path / "s.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["tokenizer"] == "unicode" and saved["predictions"]["rouge1"] == 100
    assert "tokenizer unicode" in proc.stdout and "100.00" in proc.stdout


def test_unicode_tokens_are_rouge_score_s_on_ascii_text():
    """English scores do not move: on ASCII the Unicode tokenizer is rouge-score's."""
    from nltk.stem import porter
    from rouge_score import tokenize

    from loralay_build.rouge import tokenizer

    texts = [src + " " + tgt for _, src, tgt in ROWS] + [
        "State-of-the-art (SOTA) models, e.g. BERT_base, reach 93.5% F1 on CoNLL'03!",
        "x_1 + y^2 = z; don't re-implement it: 2x faster at n=1024 (see Sec. 3.1)."]
    stemmer = porter.PorterStemmer()
    for text in texts:
        assert tokenizer("unicode").tokenize(text) == tokenize.tokenize(text, stemmer)
    # and where rouge-score's loses words, the Unicode one keeps them whole
    assert tokenizer("unicode").tokenize("données 연구는 São") == ["donné", "연구는", "são"]
    assert tokenize.tokenize("données 연구는 São", stemmer) == ["donn", "es", "s", "o"]


def test_a_loralay_dataset_has_lead_k_and_the_greedy_oracle(built_sample, tmp_path):
    """Issue 46, 10: `eval` said "the baselines need a CiteSum dataset" on a LoRaLay one,
    and wrote its scores into the dataset folder."""
    from loralay_build.scoring import run_eval  # noqa: PLC0415

    said: list[str] = []
    out = run_eval(built_sample[0], "train", echo=said.append, out=tmp_path / "s.json")
    got = json.loads(out.read_text())
    assert set(got) == {"lead_k", "ext_oracle", "examples", "tokenizer"}
    assert got["examples"] == 6 and got["tokenizer"] == "unicode"
    for key in ("rouge1", "rouge2", "rougeL"):
        assert 0 < got["lead_k"][key] < got["ext_oracle"][key] < 100
    assert said[0].startswith("train: 6 examples") and "lead_k" in said[0]
    assert not list(built_sample[0].glob("eval-*"))


def test_the_greedy_oracle_adds_sentences_while_rouge_rises():
    from loralay_build.scoring import Rouge, greedy_oracle, lead_k  # noqa: PLC0415

    rouge = Rouge("unicode")
    sents = ["Cats sleep all day.", "The market fell.", "Dogs bark at night.", "Rain came."]
    ref = "cats sleep all day and dogs bark at night"
    assert greedy_oracle(sents, ref, rouge) == "Cats sleep all day. Dogs bark at night."
    assert lead_k(sents, "one two three four five six", rouge) == \
        "Cats sleep all day. The market fell."
