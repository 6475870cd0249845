"""phpShort's wire format, spoken by the groups that mirror its API (domains, spaces;
docs/design.md#domains): the envelopes and Laravel's paginator (`resources`, `pagination`),
list parameters (`listing`) and request bodies read alike in every media type (`form_body`)."""
