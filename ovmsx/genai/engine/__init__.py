"""The engine process and its client: an openvino-genai pipeline in a child process of its own
(so no request can take the server down with it), the wire between them, the generation config
built per request, streamed text, and the grammar checker that bounds structured output."""
