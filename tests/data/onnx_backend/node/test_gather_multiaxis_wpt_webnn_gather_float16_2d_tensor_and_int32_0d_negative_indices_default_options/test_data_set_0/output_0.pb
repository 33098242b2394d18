
BoutputJ!ÔOÔÐÔŠÎ‘U½Ñ{QRzR>Q…¼MÒ