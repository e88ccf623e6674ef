"""Local servers that speak the remote services' real wire protocols: OpenAI-compatible chat completions,
Amazon Bedrock ConverseStream, and the SageMaker runtime in front of vLLM-Omni, so the production adapters run
unmodified against them."""
