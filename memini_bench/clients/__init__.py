"""Layer 2: HTTP and LLM clients (OpenAI-compatible), with retries and one-line errors."""
