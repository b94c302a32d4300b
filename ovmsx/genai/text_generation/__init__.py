"""Text generation (``HttpLLMCalculator``, ``--task text_generation``): the LLM node and
servable, chat templates, output parsers' use, and the chat/completions and Responses answers."""
