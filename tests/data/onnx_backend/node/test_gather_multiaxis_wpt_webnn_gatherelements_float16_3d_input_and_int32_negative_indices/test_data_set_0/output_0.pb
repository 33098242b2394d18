
BoutputJ‘UOÔÐÔR