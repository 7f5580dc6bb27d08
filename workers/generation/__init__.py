"""Text generation behind one interface: the demo's own small model and Hugging Face models."""
