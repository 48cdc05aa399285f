import os
# A hub model id without this hangs ~46 s before failing on a machine with no hub access.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
