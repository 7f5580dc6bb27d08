"""The demos: the example studies with seeded answers and their reports (``studies``), and
the playable game: a corpus of our own writing, the small generator trained on it, and the
builder of the demo's boundary studies."""
