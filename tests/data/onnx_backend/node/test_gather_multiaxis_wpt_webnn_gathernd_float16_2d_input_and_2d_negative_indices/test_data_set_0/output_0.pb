
BoutputJQ‘U