"""`images: true`: every kept page as a JPEG in the `images` config, removed words white.

What was removed is found here independently of the build's bookkeeping: each PDF is
re-extracted with Poppler and every word whose (word, box, page) is not in the dataset
row was cut; a page 1 none of whose words was kept is a dropped cover page.

Tolerance for "white": inside a removed word's box the build paints exactly 255 before
encoding (checked below on a lossless render); JPEG at quality 75 then rings where an 8x8
block also holds dark kept text next to the box. Measured on the sample and the shared
corpus (5,700 boxes): the darkest pixel of any box shrunk by 1 px was 224, and fewer than
0.1 % of box pixels fall under 250. A surviving stroke of text is under 128, so the check
is: every pixel of every box shrunk by 1 px >= 200 in every channel, and at least 99.5 % of
them >= 250 — far from ink, close to what JPEG can promise.
"""

from __future__ import annotations

import glob
import io
import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

from loralay_build import api
from loralay_build.failures import Failure, FailureClass
from loralay_build.images.render import open_pdf, paint_white, render_pages, render_rgb
from loralay_build.images.store import StaleImages
from loralay_build.pdftext import extract_document
from loralay_build.write.features import FEATURES
from loralay_build.write.images import IMAGE_FEATURES

from .conftest import (
    REPO,
    SAMPLE,
    build_local,
    config,
    copy_run,
    local_refresh_exited_at,
    local_refresh_killed_when,
    loralay,
    rows_as_written,
    shared_path,
)
from .helpers.images import dataset_files
from .helpers.refresh import DIFF, V1_KEPT, make_manifests

INK, FLOOR, WHITE, WHITE_SHARE = 128, 200, 250, 0.995
pytestmark = pytest.mark.e2e


def build_in_process(manifest: Path, out: Path, **overrides) -> None:
    api.build("local", out, manifest=str(manifest), workers=2, **overrides)


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("images") / "ds"
    build_in_process(SAMPLE, out, images=True)
    return out


def pdf_paths(manifest: Path) -> dict[str, Path]:
    lines = [json.loads(x) for x in manifest.read_text(encoding="utf-8").splitlines() if x]
    return {d["id"]: manifest.parent / d["file"] for d in lines}


def parquet_rows(out: Path, folder: str) -> list[dict]:
    rows = []
    for f in sorted(glob.glob(str(out / folder / "*.parquet"))):
        rows += pq.read_table(f).to_pylist()
    return rows


def box_px(box, dpi: int) -> tuple[int, int, int, int]:
    s = dpi / 72
    return (math.floor(box[0] * s), math.floor(box[1] * s), math.ceil(box[2] * s),
            math.ceil(box[3] * s))


def removed_words(pdf: Path, row: dict) -> tuple[list[tuple[int, tuple]], set[int]]:
    """(page, box) of every extracted word the row lacks; and the pages of the PDF."""
    doc = extract_document(pdf, row["article_id"])
    kept = set(zip(row["article_words"], map(tuple, row["article_bboxes"]),
                   row["article_pages"], strict=True))
    cut = [(p, b) for w, b, p in zip(doc.words, doc.boxes, doc.word_pages, strict=True)
           if (w, tuple(np.float32(v) for v in b), p) not in kept]
    return cut, {p.number for p in doc.pages}


def check_images(out: Path, manifest: Path) -> int:
    """Pages = the kept pages; every removed word's box white in the stored JPEG (see the
    module docstring); returns how many boxes were checked."""
    paths = pdf_paths(manifest)
    images: dict[str, dict[int, dict]] = {}
    for r in parquet_rows(out, "images"):
        images.setdefault(r["article_id"], {})[r["page"]] = r
    rows = parquet_rows(out, "data")
    assert rows and set(images) == {r["article_id"] for r in rows}
    checked, white, total = 0, 0, 0
    for row in rows:
        cut, pages = removed_words(paths[row["article_id"]], row)
        cover = 1 not in row["article_pages"] and any(p == 1 for p, _ in cut)
        mine = images[row["article_id"]]
        assert set(mine) == pages - ({1} if cover else set()), row["article_id"]
        for page, r in mine.items():
            w, h = row["page_sizes"][page - 1]
            assert abs(r["width"] - w * r["dpi"] / 72) <= 1
            assert abs(r["height"] - h * r["dpi"] / 72) <= 1
            px = np.asarray(Image.open(io.BytesIO(r["image"]["bytes"])).convert("RGB"))
            assert px.shape == (r["height"], r["width"], 3)
            for p, box in cut:
                if p != page:
                    continue
                x0, y0, x1, y1 = box_px(box, r["dpi"])
                inner = px[y0 + 1:y1 - 1, x0 + 1:x1 - 1]
                if inner.size:
                    assert inner.min() >= FLOOR, (row["article_id"], page, box)
                    white += int((inner.min(axis=2) >= WHITE).sum())
                    total += inner.shape[0] * inner.shape[1]
                checked += 1
    assert total and white / total >= WHITE_SHARE, white / total
    return checked


def test_sample_images_are_the_kept_pages_with_every_removed_word_white(sample):
    assert check_images(sample, SAMPLE) > 1000


def test_shared_corpus_images_are_the_kept_pages_with_every_removed_word_white(tmp_path):
    manifest = shared_path("corpus", "manifest.jsonl")
    build_in_process(manifest, tmp_path / "ds", images=True)
    assert check_images(tmp_path / "ds", manifest) > 4000
    report = json.loads((tmp_path / "ds" / "report.json").read_text())
    assert report["run"]["pages_rendered"] == len(parquet_rows(tmp_path / "ds", "images"))
    assert report["run"]["render_ms_per_page"] > 0 and report["run"]["extract_ms_per_page"] > 0


def test_painting_is_exactly_white_and_covers_ink_before_jpeg(sample):
    """Losslessly: the painted box is 255 everywhere, and the unpainted render had ink
    there (the boxes and pdfium's pixels line up)."""
    row = next(r for r in parquet_rows(sample, "data")
               if r["article_id"] == "fr_hal_cover_glaciers")
    cut, _ = removed_words(pdf_paths(SAMPLE)[row["article_id"]], row)
    on_page = [b for p, b in cut if p == 2]
    assert len(on_page) > 100
    with open_pdf(pdf_paths(SAMPLE)[row["article_id"]]) as pdf:
        before = render_rgb(pdf, 2, 100 / 72)
    after = before.copy()
    paint_white(after, on_page, 100 / 72)
    a, b = np.asarray(before), np.asarray(after)
    inked = 0
    for box in on_page:
        x0, y0, x1, y1 = box_px(box, 100)
        assert b[y0:y1, x0:x1].min() == 255
        inked += a[y0:y1, x0:x1].min() < INK
    assert inked >= 0.95 * len(on_page)


def test_images_config_loads_and_the_default_config_is_unchanged(sample):
    from datasets import load_dataset

    pages = load_dataset(str(sample), "images")
    docs = load_dataset(str(sample))
    assert pages["train"].features == IMAGE_FEATURES
    assert docs["train"].features == FEATURES
    assert set(pages) == set(docs)
    first = pages["train"][0]
    assert first["image"].size == (first["width"], first["height"]) and first["dpi"] == 100
    card = yaml.safe_load((sample / "README.md").read_text().split("---")[1])
    # the page images' config, and one per language of the sample (issue 46, 1)
    names = [c["config_name"] for c in card["configs"]]
    assert names[0] == "default" and sorted(names) == ["default", "en", "es", "fr", "images",
                                                       "ko", "pt"]


def rebuild(out: Path, config: dict, tmp: Path) -> subprocess.CompletedProcess:
    conf = tmp / "conf.yaml"
    conf.write_text(yaml.safe_dump(config))
    return loralay("build", "--source", "local", "--manifest", str(SAMPLE), "--out", str(out),
                   "--workers", "2", "--config", str(conf), check=True)


def test_changing_image_settings_redoes_every_document(sample, tmp_path):
    out = tmp_path / "ds"
    shutil.copytree(sample, out)
    run = rebuild(out, {"images": True, "image_dpi": 72}, tmp_path)
    assert "11 to do, of which 11 because `image_dpi` changed" in run.stderr
    assert {r["dpi"] for r in parquet_rows(out, "images")} == {72}
    check_images(out, SAMPLE)
    run = rebuild(out, {"images": False}, tmp_path)
    assert "11 because `image_dpi`, `images` changed" in run.stderr
    assert not (out / "images").exists()
    assert "config_name: images" not in (out / "README.md").read_text()
    with sqlite3.connect(out / "state" / "images-00000-of-00001.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM pages").fetchone()[0] == 0


def test_another_pdfium_redoes_the_documents_it_rendered(sample, tmp_path):
    """The renderer's version is part of the print with images on (other pixels)."""
    out = tmp_path / "ds"
    shutil.copytree(sample, out)
    with sqlite3.connect(out / "state" / "shard-00000-of-00001.sqlite") as con:
        prints = [v for (v,) in con.execute("SELECT fingerprint FROM ledger")]
        con.execute("UPDATE ledger SET fingerprint=replace(fingerprint, 'pypdfium2 ', "
                    "'pypdfium2 0') WHERE key='fr_hal_cover_glaciers'")
    assert len(prints) == 11 and all("pypdfium2 " in v for v in prints)
    run = rebuild(out, {"images": True}, tmp_path)
    assert "1 to do, of which 1 because loralay-build, Poppler or pdfium changed" in run.stderr
    assert image_table(out) == image_table(sample)


def image_table(out: Path) -> list[tuple]:
    return sorted((r["article_id"], r["page"], r["width"], r["height"], r["image"]["bytes"])
                  for r in parquet_rows(out, "images"))


@pytest.mark.stress
def test_killed_builds_resume_to_the_same_images(sample, tmp_path):
    clean = image_table(sample)
    conf = tmp_path / "conf.yaml"
    conf.write_text("images: true\n")
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
           "--manifest", str(SAMPLE), "--config", str(conf), "--workers", "2"]
    t0 = time.monotonic()
    loralay(*cmd[3:], "--out", str(tmp_path / "timed"), check=True)
    duration = time.monotonic() - t0
    for trial, share in enumerate((0.3, 0.5, 0.7)):
        out = tmp_path / f"killed{trial}"
        proc = subprocess.Popen([*cmd, "--out", str(out)], cwd=REPO, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(share * duration)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        loralay(*cmd[3:], "--out", str(out), check=True)
        assert image_table(out) == clean, trial


def test_finish_refuses_images_rendered_for_another_result(sample, tmp_path):
    """Pages whose input print is not the recorded result's (a run killed between storing
    the pages and recording the result, then a finish): an error, the dataset kept."""
    out = tmp_path / "ds"
    shutil.copytree(sample, out)
    before = image_table(out)
    with sqlite3.connect(out / "state" / "images-00000-of-00001.sqlite") as con:
        con.execute("UPDATE docs SET inputs='[]' WHERE doc_id='fr_hal_cover_glaciers'")
    with pytest.raises(StaleImages, match="fr_hal_cover_glaciers"):
        build_in_process(SAMPLE, out, images=True)
    assert image_table(out) == before


@pytest.mark.parametrize("key,conf", [
    ("image_dpi", {"image_dpi": 20}), ("image_quality", {"image_quality": 100}),
    ("images", {"images": "yes"}),
    ("config_name", {"images": True, "config_name": "images"})])  # two configs, one name
def test_bad_image_settings_are_one_line_and_exit_2(key, conf, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(conf))
    proc = loralay("build", "--source", "local", "--manifest", str(SAMPLE), "--out",
                   str(tmp_path / "o"), "--config", str(bad), check=False)
    assert proc.returncode == 2 and key in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


@pytest.mark.parametrize("name,cls", [("en_corrupted_sensors", FailureClass.CORRUPTED),
                                      ("es_encrypted_tutor", FailureClass.ENCRYPTED)])
def test_a_pdf_pdfium_cannot_render_is_a_failure_class_and_leaves_no_files(name, cls,
                                                                          tmp_path):
    """The classes Poppler gives the same files (a password was `corrupted` at first)."""
    got = render_pages(REPO / f"data/sample/pdf/{name}.pdf", name, [1], {}, 100, 75, tmp_path)
    assert isinstance(got, Failure) and got.cls == cls, got
    assert list(tmp_path.iterdir()) == []


# -- a refresh of a dataset built with images ---------------------------------------------


@pytest.fixture(scope="module")
def manifests(tmp_path_factory) -> tuple[Path, Path]:
    """test_refresh's: v1 the sample; v2 five papers of ../shared/corpus more (four kept,
    one cut short), two copies of old papers, an old id gone from it."""
    return make_manifests(tmp_path_factory.mktemp("manifests"))


@pytest.fixture(scope="module")
def images_on(tmp_path_factory) -> Path:
    return config(tmp_path_factory.mktemp("cfg"), images=True)


@pytest.fixture(scope="module")
def images_v1(manifests, images_on, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("images-v1") / "ds"
    build_local(manifests[0], out, "--config", str(images_on), check=True)
    return out


@pytest.fixture(scope="module")
def images_refreshed(images_v1, manifests, images_on, tmp_path_factory
                     ) -> tuple[Path, dict[str, tuple[int, int, bytes]]]:
    """A copy of v1 refreshed with v2's manifest: (folder, v1's files as they were)."""
    out = copy_run(images_v1, tmp_path_factory.mktemp("images-v2") / "ds")
    before = dataset_files(out)
    build_local(manifests[1], out, "--refresh", "--config", str(images_on), check=True)
    return out, before


def loaded(out: Path, name: str | None) -> dict[str, list[str]]:
    """`load_dataset(DIR[, name])` in a process of its own: each split's `article_id`s."""
    code = ("import json, sys; from datasets import load_dataset; "
            "ds = load_dataset(*sys.argv[1:]); "
            "print(json.dumps({s: list(ds[s]['article_id']) for s in ds}))")
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(out.parent / "hf-cache")}
    proc = subprocess.run([sys.executable, "-c", code, str(out), *([name] if name else [])],
                          capture_output=True, text=True, check=True, env=env, cwd=REPO)
    return json.loads(proc.stdout.splitlines()[-1])


def in_order(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def test_a_refresh_with_images_carries_the_old_pages_and_adds_the_new_ones(
        images_refreshed, images_v1, manifests, tmp_path):
    out, before = images_refreshed
    after = dataset_files(out)
    old = {k: v for k, v in before.items() if k.startswith(("data/", "images/"))}
    assert sorted(k.split("/")[0] for k in old) == ["data"] * 3 + ["images"] * 3
    # byte for byte: carried, not written again; renumbered into the split's one total
    # (issue 46, 12), its content digest its name still
    renamed = {name: next(a for a in after if a.split("/")[0] == name.split("/")[0] and
                          a.rsplit("-", 1)[1] == name.rsplit("-", 1)[1]) for name in old}
    assert sorted(n.split("/")[1].rsplit("-", 1)[0] for n in renamed.values()) == sorted(
        [f"{s}-00000-of-00002" for s in ("test", "train", "validation")] * 2)
    for name, (_, _, data) in old.items():
        assert after[renamed[name]][2] == data, name
    new = sorted(k for k in after if k.startswith("images/") and k not in renamed.values())
    assert [n.split("/")[1].rsplit("-", 1)[0] for n in new] == [
        "test-00001-of-00002", "train-00001-of-00002", "validation-00001-of-00002"]
    for name in new:  # the new files hold the new documents' pages only, in row order
        split = name.split("/")[1].split("-")[0]
        rows = pq.read_table(out / name, columns=["article_id"]).column(0).to_pylist()
        assert in_order(rows) == DIFF["added"][split]
    # every page of every kept document, old and new, its removed words white
    both = tmp_path / "both.jsonl"
    v1 = manifests[0].read_text().splitlines()
    ids = {json.loads(x)["id"] for x in v1}
    both.write_text("\n".join(v1 + [x for x in manifests[1].read_text().splitlines()
                                     if json.loads(x)["id"] not in ids]) + "\n")
    assert check_images(out, both) > 1000
    card = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    configs = {c["config_name"]: {f["split"]: f["path"] for f in c["data_files"]}
               for c in card["configs"]}
    for folder, name in (("data", "default"), ("images", "images")):
        assert configs[name] == {s: sorted(k for k in after if k.startswith(f"{folder}/{s}-"))
                                 for s in ("train", "validation", "test")}
    want = {s: V1_KEPT[s] + DIFF["added"][s] for s in V1_KEPT}
    assert loaded(out, None) == want
    pages = loaded(out, "images")
    assert {s: in_order(v) for s, v in pages.items()} == want
    assert sum(map(len, pages.values())) == len(parquet_rows(out, "images"))
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["pages_rendered"] == len(parquet_rows(out, "images"))
    assert json.loads((out / "diff.json").read_text()) == DIFF


def test_a_refresh_with_images_and_nothing_new_rewrites_no_file(images_refreshed, manifests,
                                                                 images_on, tmp_path):
    out = copy_run(images_refreshed[0], tmp_path / "ds")
    before = dataset_files(out)
    proc = build_local(manifests[1], out, "--refresh", "--config", str(images_on), check=True)
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "done: refresh: nothing new since v2; no file rewritten")
    assert dataset_files(out) == before  # same inodes, times and bytes


def _without_recorded_images(out: Path) -> None:
    """The base as this tool committed it before it recorded the images' files."""
    with sqlite3.connect(out / "state" / "finish.sqlite") as con:
        (facts,) = con.execute("SELECT value FROM checkpoints WHERE name = 'dataset'"
                               ).fetchone()
        facts = json.loads(facts)
        del facts["image_files"]
        con.execute("UPDATE checkpoints SET value = ? WHERE name = 'dataset'",
                    (json.dumps(facts),))


@pytest.mark.stress
@pytest.mark.parametrize("kill,recorded", [
    ("images", True), ("loralay_build.write:write_dataset", True),
    ("loralay_build.pdf.finish:commit_base", True),
    (None, False), ("loralay_build.write:write_dataset", False)])
def test_a_refresh_with_images_killed_then_run_again_gives_the_uninterrupted_one(
        kill, recorded, images_refreshed, images_v1, manifests, images_on, tmp_path):
    """Killed while a page file is written, after `images/` is swapped in and before the
    data, and before the base is committed; and from a base committed without the images'
    files (an earlier version of the tool), whole and killed after `images/` is swapped in:
    run again, the folder equals the uninterrupted refresh's."""
    out = copy_run(images_v1, tmp_path / "ds")
    if not recorded:
        _without_recorded_images(out)
    if kill == "images":
        assert local_refresh_killed_when(out, manifests[1], ".images-tmp-*/*.partial",
                                         "--config", str(images_on)) == -signal.SIGKILL
    elif kill is not None:
        assert local_refresh_exited_at(out, manifests[1], kill, "--config", str(images_on)) == 9
    build_local(manifests[1], out, "--refresh", "--config", str(images_on), check=True)
    want = images_refreshed[0]
    for folder in ("data", "images"):
        assert rows_as_written(out, folder) == rows_as_written(want, folder), folder
    for name in ("README.md", "diff.json"):
        assert (out / name).read_text() == (want / name).read_text()
    again = build_local(manifests[1], out, "--refresh", "--config", str(images_on),
                        check=True)
    assert "nothing new since v2" in again.stderr


def test_a_refresh_with_images_of_a_dataset_without_them_is_refused(
        manifests, images_on, tmp_path):
    """Built without images, refreshed with them: the old rows' pages do not exist, and
    their row settings differ (`images`); one line, nothing written. The same for a
    dataset of a tool that committed no base (its `images` read from the folder)."""
    out = tmp_path / "ds"
    build_local(manifests[0], out, check=True)
    older = copy_run(out, tmp_path / "older")
    with sqlite3.connect(older / "state" / "finish.sqlite") as con:
        con.execute("DROP TABLE base_decisions")
        con.execute("DELETE FROM checkpoints WHERE name = 'dataset'")
        con.execute("PRAGMA user_version = 0")  # such a tool's files had none (store/base.py)
    for folder in (out, older):
        before = dataset_files(folder)
        proc = build_local(manifests[1], folder, "--refresh", "--config", str(images_on))
        assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == (
            "loralay: --refresh: `images` is true, the dataset's rows were made with false; "
            "its old rows cannot change: refresh with the same `images`, or rebuild without "
            "--refresh")
        assert dataset_files(folder) == before
    # built with images, a file of images/ then lost: the old rows' pages are not there
    lost = tmp_path / "lost"
    build_local(manifests[0], lost, "--config", str(images_on), check=True)
    gone = sorted((lost / "images").iterdir())[1]  # train's file
    gone.unlink()
    proc = build_local(manifests[1], lost, "--refresh", "--config", str(images_on))
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == (
        f"loralay: {lost}: --refresh with images: true, and the page images of the dataset's "
        f"old rows are not all there (images/{gone.name} is missing); rebuild without "
        "--refresh")
    assert not (lost / "diff.json").exists()
