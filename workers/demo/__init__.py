"""The playable demo: a corpus of our own writing, the small generator trained on it, and
the builder of the demo's boundary studies."""
