"""A card's facts as a finished build gives them, for the card's tests."""

from __future__ import annotations

from loralay_build.write import CardFacts

FACTS = CardFacts(name="hal-fr-test", source="HAL", language="fr",
                  split_rule="chronological 80/10/10 by publication date",
                  filters=("pages <= p95", "summary words >= p5"),
                  thresholds={"max_pages": 31.0, "min_summary_words": 52.5})
