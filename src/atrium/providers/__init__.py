"""Named OpenAI-compatible providers: an account's own (`/v1/providers`) and the operator's
(`ATRIUM_PROVIDERS`), which models address as `openai-compatible:<provider>/<model>`."""
