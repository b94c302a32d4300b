"""The OpenAI-compatible protocol every generative task shares: request fields checked as OVMS
checks them, ``/v3`` errors and refusal logging, the per-request meter, ``/v3/tokenize`` and the
Responses API's translation to chat."""
