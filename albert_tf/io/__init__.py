"""Floor 0, no TensorFlow at module level: file I/O (`files`: local paths, or TensorFlow's
filesystems such as gs:// loaded only when such a path is used; atomic writes), names read
from files that must stay inside a folder (`names`), and what the command-line tools show on
the terminal (`console`: TensorFlow's start-up chatter hidden)."""
