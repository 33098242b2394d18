
BinputJ0!ÔOÔÐÔŠÎ‘U½Ñ{QRzR>Q…¼MÒ¥UôRQSjIìÌ¶ÐdQN;³ÇqNšT