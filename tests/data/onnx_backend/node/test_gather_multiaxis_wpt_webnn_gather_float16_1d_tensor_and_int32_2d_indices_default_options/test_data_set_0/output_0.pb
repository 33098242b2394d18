
BoutputJQ>Q³ÇìÌ