
BoutputJqNšT