
BinputJ!ÔOÔÐÔŠÎ‘U½Ñ{QR