"""Spider contracts (`scrapy check`) that run offline.

A contract's `@url` is a literal, and the real hosts must not be hit by a check, so
`@local_url PATH` prefixes PATH with `$LORALAY_CHECK_BASE` (a local server in tests)."""

from __future__ import annotations

import os
from typing import Any

from scrapy.contracts import Contract


class LocalUrlContract(Contract):
    name = "local_url"

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        args["url"] = os.environ["LORALAY_CHECK_BASE"].rstrip("/") + self.args[0]
        return args
