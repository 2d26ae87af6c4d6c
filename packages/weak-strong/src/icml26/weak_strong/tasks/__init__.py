"""Real task streams: LLM answers to generated math problems, step-by-step Sudoku solving."""
