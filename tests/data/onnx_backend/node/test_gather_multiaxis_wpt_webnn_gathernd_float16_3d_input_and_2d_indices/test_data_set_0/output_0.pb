
BoutputJzR>Q…¼MÒ‘U½Ñ{QR¥UôRQS