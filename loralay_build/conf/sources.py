"""Each source's own keys and the paper's defaults for it (splits, percentiles, manners)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from .common import CommonSettings
from .fields import (
    Count,
    HttpUrl,
    IsoDate,
    Language,
    NonNegative,
    NonNegativeCount,
    Percentile,
    PositiveSeconds,
    Proportions,
    Rate,
)

HAL_FIELDS = ["docid", "halId_s", "uri_s", "title_s", "language_s", "docType_s",
              "fr_abstract_s", "en_abstract_s", "*_abstract_s", "abstract_s", "fileMain_s",
              "files_s", "producedDate_s", "producedDate_tdate", "publicationDate_s",
              "publicationDate_tdate"]
SCIELO_COLLECTIONS = ["bol", "col", "ecu", "esp", "per", "prt", "pry", "scl", "ury"]
# the one retry rule of the sources' harvest kit (sources/kit/harvest.py), one key
ATTEMPTS = ("tries of a request whose answer could not be used (a search page, an OAI "
            "record, a metadata JSON), on top of the HTTP retries")
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


class LocalSettings(CommonSettings):
    """Your own PDFs: no percentile filters by default (a handful of papers would lose its
    longest and shortest one to the run's own percentiles)."""

    INPUT_PATHS = ("manifest",)
    REQUIRED_INPUTS = ("manifest",)
    INPUT_FILES = ("manifest",)
    IDENTITY = ()  # any manifest: a refresh's own manifest is how papers are added
    manifest: str | None = Field(None, min_length=1, description="the JSON-lines manifest")
    max_pages_percentile: Percentile | None = None
    min_summary_percentile: Percentile | None = None


class HalSettings(CommonSettings):
    IDENTITY = ("api_url", "language", "submit_type", "doc_types", "extra_filters")
    api_url: HttpUrl = Field("https://api.archives-ouvertes.fr/search/",
                             description="the search API (a portal: .../search/<portal>/)")
    rows: int = Field(500, ge=1, le=10_000, description="records per search page")
    language: Language = Field("fr", description="fq=language_s; its abstract is the summary")
    submit_type: str = Field("file", min_length=1, description="fq=submitType_s")
    doc_types: list[str] = Field(["ART", "COMM"], description="fq=docType_s; [] for all")
    extra_filters: list[str] = Field([], description="more fq's")
    fields: list[str] = Field(HAL_FIELDS, min_length=1, description="fl: what is read")
    RENAMED = {"page_attempts": "attempts"}
    attempts: Count = Field(3, description=ATTEMPTS)
    pdf_attempts: Count = Field(3, description="tries for a PDF cut short")
    max_future_years: NonNegativeCount = Field(1, description="later dates are kept unknown")
    split_proportions: Proportions = [0.94, 0.03, 0.03]
    min_summary_percentile: Percentile | None = 1
    check_summary_language: bool = True


class ArxivSettings(CommonSettings):
    INPUT_PATHS = ("ids_dir", "metadata_path")
    INPUT_FILES = ("metadata_path",)
    EXTRA = "arxiv"
    IDENTITY = ("select", "categories")  # not the files: a refresh reads a newer snapshot
    select: Literal["ids", "snapshot"] = Field(
        "ids", description="the papers: Cohan et al.'s ids, or the snapshot's lines of "
        "categories and update_date (docs/arxiv.md)")
    ids_dir: str | None = Field(None, min_length=1, description="Cohan et al.'s id files")
    metadata_path: str | None = Field(None, min_length=1, description="the arXiv snapshot")
    categories: list[str] = Field(
        [], description="select: snapshot: category prefixes (cs., math.), any of a "
        "paper's; [] for all")
    from_date: IsoDate | None = Field(None, description="select: snapshot: first update_date")
    until_date: IsoDate | None = Field(None, description="select: snapshot: last update_date")
    bucket_api_url: HttpUrl = Field(
        "https://storage.googleapis.com/storage/v1/b/arxiv-dataset/o", description="listing")
    bucket_download_url: HttpUrl = Field("https://storage.googleapis.com/arxiv-dataset",
                                         description="+ /<object name>")
    listing_pages: Count = Field(5, description="pages of one id's listing followed")
    pdf_attempts: Count = Field(3, description="tries for a PDF cut short")
    timeout_s: PositiveSeconds = 60
    split_mode: Literal["chronological", "given"] = "given"

    @field_validator("categories")
    @classmethod
    def _prefixes(cls, values: list[str]) -> list[str]:
        """An empty prefix would take every paper, one with a space none."""
        bad = [v for v in values if not v or any(c.isspace() for c in v)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a category prefix (one word: cs., math.CO)")
        return values

    @model_validator(mode="after")
    def _selection(self) -> ArxivSettings:
        """Keys of the other selection would be ignored, and a snapshot paper has no split
        of its own: said before anything is read rather than left to surprise."""
        if self.select == "ids":
            chosen = [k for k in ("categories", "from_date", "until_date") if getattr(self, k)]
            if chosen:
                raise ValueError(f"{', '.join(chosen)} choose papers of the snapshot: set "
                                 "`select: snapshot` (select: ids takes Cohan et al.'s ids)")
        elif self.split_mode == "given":
            raise ValueError("select: snapshot: the snapshot's papers have no split of their "
                             "own: set `split_mode: chronological`")
        return self


class PubmedSettings(CommonSettings):
    """PubMed-Lay (docs/pubmed.md). `harvest` picks the papers: `ids`, Cohan et al.'s (a
    `GetRecord` each); `list_records`, what PMC's OAI service lists from `from_date` (a
    refresh: since the last harvest), the date keys named as `OaiSettings` names them."""

    INPUT_PATHS = ("ids_dir",)
    ALIASES = {"from": "from_date", "until": "until_date"}
    EXTRA = "oai"
    # not `harvest`: a dataset of Cohan's ids grows by a listing (docs/pubmed.md)
    IDENTITY = ("oai_url", "metadata_prefix", "set")
    harvest: Literal["ids", "list_records"] = Field(
        "ids", description="ids: GetRecord of ids_dir's ids; list_records: ListRecords by date")
    ids_dir: str | None = Field(None, min_length=1, description="Cohan et al.'s id files")
    oai_url: HttpUrl = Field("https://pmc.ncbi.nlm.nih.gov/api/oai/v1/mh/",
                             description="PMC OAI-PMH")
    metadata_prefix: Literal["pmc_fm", "pmc"] = Field("pmc_fm", description="front matter")
    set: str | None = Field("pmc-open", min_length=1,
                            description="list_records: a setSpec (null: every record)")
    from_date: IsoDate | None = Field(None, description="list_records: first datestamp "
                                      "(YYYY-MM-DD; `from`)")
    until_date: IsoDate | None = Field(None, description="list_records: last datestamp "
                                       "(YYYY-MM-DD; `until`; null: today)")
    window_days: int = Field(7, ge=1, le=36_500,
                             description="list_records: from..until in windows of this many days")
    tool: str = Field("loralay-build", min_length=1, description="NCBI's `tool`")
    email: str | None = Field(None, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
                              description="NCBI's `email` (null: contact)")
    send_tool_email: bool = Field(True, description="send tool and email with OAI requests")
    attempts: Count = Field(3, description=ATTEMPTS)
    pdf_metadata_url: HttpUrl = Field(
        "https://pmc-oa-opendata.s3.amazonaws.com/metadata/{pmcid_ver}.json",
        description="PMC cloud metadata")
    s3_https_url: HttpUrl = Field("https://{bucket}.s3.amazonaws.com",
                                  description="how an s3:// pdf_url is fetched")
    pdf_attempts: Count = Field(3, description="tries for a PDF cut short")
    cloud_requests_per_second: Rate = Field(1.0, description="the cloud bucket's rate")
    requests_per_second: Rate = 0.33
    peak_oai_requests: Count | None = Field(100, description="NCBI peak-hour cap (null: off)")
    timeout_s: PositiveSeconds = 60
    split_mode: Literal["chronological", "given"] = "given"

    @model_validator(mode="after")
    def _a_listing_needs_dates_and_a_split(self) -> PubmedSettings:
        """A listing has no end of its own (PMC holds millions of records) and its papers no
        given split (Cohan et al.'s covers their ids only): refused before any request."""
        if self.harvest != "list_records":
            return self
        if self.from_date is None:
            raise ValueError("harvest: list_records needs from_date (YYYY-MM-DD), the first "
                             "datestamp to list: PMC holds millions of records")
        if self.split_mode == "given":
            raise ValueError("harvest: list_records lists papers outside Cohan et al.'s "
                             "split: set split_mode: chronological")
        return self


class OaiSettings(CommonSettings):
    """Any OAI-PMH repository (docs/oai.md). `from` and `until` are Python keywords: the
    keys are `from_date` / `until_date`, and `from:` / `until:` in a file are read as them."""

    ALIASES = {"from": "from_date", "until": "until_date"}
    EXTRA = "oai"
    IDENTITY = ("base_url", "metadata_prefix", "set", "languages")
    base_url: HttpUrl | None = Field(None, description="the repository's OAI-PMH endpoint")
    metadata_prefix: Literal["oai_dc", "oai_openaire", "jpcoar_1.0", "jpcoar_2.0",
                             "xMetaDissPlus", "dim", "mets", "datacite", "oai_datacite"] = Field(
        "oai_dc", description="the metadata format asked for (docs/oai.md: the richest)")
    set: str | None = Field(None, min_length=1, description="an optional setSpec")
    from_date: IsoDate | None = Field(None, description="first datestamp (YYYY-MM-DD; `from`)")
    until_date: IsoDate | None = Field(None, description="last datestamp (YYYY-MM-DD; `until`)")
    window_days: int = Field(365, ge=1, le=36_500,
                             description="from..until split into windows of this many days")
    languages: list[Language] = Field(["en"], min_length=1,
                                      description="keep papers in these (never picks the summary)")
    landing_page_pdf: bool = Field(True, description="no PDF link: read the landing page's "
                                   "citation_pdf_url")
    attempts: Count = Field(3, description=ATTEMPTS)
    pdf_attempts: Count = Field(3, description="tries for a PDF cut short")
    max_future_years: NonNegativeCount = Field(1, description="later dates are kept unknown")
    timeout_s: PositiveSeconds = 60
    check_summary_language: bool = True  # a repository's language label can be wrong
    # as for local: a repository (or a set of one) is often a handful of papers
    max_pages_percentile: Percentile | None = None
    min_summary_percentile: Percentile | None = None


class ScieloSettings(CommonSettings):
    EXTRA = "crawl"
    IDENTITY = ("articlemeta_url", "collections")
    articlemeta_url: HttpUrl = Field("https://articlemeta.scielo.org/api/v1/",
                                     description="ArticleMeta")
    collections: list[str] = Field(SCIELO_COLLECTIONS, min_length=1,
                                   description="collection codes (scl = Brazil)")
    from_date: IsoDate | None = Field(None, description="processing date bound")
    until_date: IsoDate | None = Field(None, description="processing date bound")
    page_size: int = Field(1000, ge=1, le=1000, description="identifiers per page")
    download_delay_s: NonNegative = Field(1.0, description="per domain")
    crawl_log_level: LogLevel = Field("INFO", description="Scrapy's log level")
    min_summary_percentile: Percentile | None = 1


class KoreaScienceSettings(CommonSettings):
    EXTRA = "crawl"
    IDENTITY = ("search_url", "publisher_filter")
    search_url: HttpUrl = Field("https://koreascience.kr/search/advanced.page",
                                description="the advanced search")
    years: list[int] = Field(list(range(2012, 2022)), min_length=1, description="years searched")
    publisher_filter: str = Field("korean", min_length=1, description="pubs=<this>")
    page_size: int = Field(50, ge=1, le=1000, description="results per search page")
    download_delay_s: NonNegative = Field(3.0, description="per domain")
    crawl_log_level: LogLevel = Field("INFO", description="Scrapy's log level")
    requests_per_second: Rate = 0.33
    split_proportions: Proportions = [0.94, 0.03, 0.03]


RELATED_WORK_PATTERN = (r"(?i)^\W*(?:[0-9IVX]+(?:\.[0-9]+)*\.?\s*)?(?:background\s+and\s+)?"
                        r"(?:related\s+works?|prior\s+works?|previous\s+works?"
                        r"|literature\s+review|related\s+literature)\b")


class CiteSumSettings(CommonSettings):
    """CiteSum (Mao et al. 2022) from S2ORC shards on disk: no PDFs, no network.

    Glob keys stay null by default: which shards to read is the user's choice."""

    EXTRA = "citesum"

    s2orc_format: Literal["2020", "datasets-api"] = Field(
        "2020", description="2020 release (pdf_parses + metadata) or the Datasets API")
    pdf_parses: str | None = Field(None, min_length=1, description="2020: pdf_parses glob")
    metadata: str | None = Field(None, min_length=1, description="2020: metadata glob")
    s2orc: str | None = Field(None, min_length=1, description="datasets-api: s2orc glob")
    abstracts: str | None = Field(None, min_length=1, description="datasets-api: abstracts glob")
    papers: str | None = Field(None, min_length=1,
                               description="datasets-api: papers glob (titles, fields; optional)")
    related_work_pattern: str = Field(RELATED_WORK_PATTERN, min_length=1,
                                      description="regex a Related Work section title matches")
    sentence_splitter: Literal["pysbd", "scispacy"] = Field(
        "pysbd", description="pysbd, or scispaCy en_core_sci_sm when installed")
    min_cited_abstract_chars: NonNegativeCount = Field(
        100, description="a cited abstract must be longer than this")
    rouge_recall_min: list[Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]] = Field(
        [0.5, 0.2, 0.4], min_length=3, max_length=3,
        description="ROUGE-1/2/L recall floors of the sentence against the cited abstract")
    drop_examples: NonNegativeCount = Field(3, description="examples of each drop in the report")
    shard_timeout_s: PositiveSeconds = Field(
        7200, description="wall clock of one shard task (a pass over one shard, or its scoring)")
    rows_per_shard: Count = 100_000

    @field_validator("licenses")
    @classmethod
    def _no_licence_filter(cls, values: list[str] | None) -> list[str] | None:
        """An example is two papers' text (the cited abstract, the citing sentence), and the
        2020 release states no licence per paper: no filter could be applied, so asking for
        one is refused rather than recorded and ignored."""
        if values is not None:
            raise ValueError("not applied by --source citesum, refused: an example joins two "
                             "papers (the cited abstract, the citing sentence) and S2ORC's "
                             "2020 release states no licence per paper; leave it null")
        return values

    @field_validator("exclude_datasets")
    @classmethod
    def _no_exclusion(cls, values: list[str]) -> list[str]:
        """The exclusion compares the words of whole papers (PDF datasets' `data/`); a
        CiteSum example holds an abstract and a sentence, never a paper's body."""
        if values:
            raise ValueError("--exclude-dataset is not applied by --source citesum, refused: "
                             "it drops near-"
                             "duplicate papers by their body's words, and a CiteSum example "
                             "has no body (an abstract and one sentence); leave it empty")
        return values

    @field_validator("related_work_pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as e:
            raise ValueError(f"a Python regular expression ({e})") from None
        return value
