"""Settings module for `scrapy check` (SCRAPY_SETTINGS_MODULE points here in tests)."""

SPIDER_MODULES = ["loralay_build.sources.crawl.spiders"]
SPIDER_CONTRACTS = {"tests.crawlcheck.contracts.LocalUrlContract": 10}
ROBOTSTXT_OBEY = True
USER_AGENT = "loralay-build/0.1 scrapy-check (mailto:loralay-build@example.org)"
TELNETCONSOLE_ENABLED = False
