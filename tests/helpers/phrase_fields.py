"""The language-file fields whose phrases may hold wildcards (`*`, `**`): the ones the phrase
matcher's linear-time and fuzz tests read."""

WILDCARD_PHRASE_FIELDS = (
    "narration_markers",
    "record_triggers",
    "record_questions",
    "teach_triggers",
    "naming_links",
)
