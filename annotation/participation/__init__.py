"""The participant's face: the pages a participant (or a crowd worker) walks through and their URLs."""
