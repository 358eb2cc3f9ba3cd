"""What the model is given: retrieval, outline, passages, packing, evidence, prompts, citations."""
