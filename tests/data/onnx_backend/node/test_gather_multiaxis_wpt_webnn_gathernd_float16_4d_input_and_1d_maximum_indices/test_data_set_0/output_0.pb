
BoutputJQS