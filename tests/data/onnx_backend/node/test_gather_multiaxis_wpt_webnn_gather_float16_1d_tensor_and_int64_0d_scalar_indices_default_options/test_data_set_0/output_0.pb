
BoutputJ‘U