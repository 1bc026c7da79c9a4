"""Operations tooling for the local OpenAI-compatible LLM server (llama-cpp-python with the
packaged Gemma 3 270M): starting, probing and stopping it. Not judge logic: the judges only see
an endpoint. Plain Python, no Django."""
