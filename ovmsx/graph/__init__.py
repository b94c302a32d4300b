"""MediaPipe graphs: read a ``graph.pbtxt``, check it, and run it."""
