
BoutputJjIN;{QMÒìÌdQôRìÌ