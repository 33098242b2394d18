
BoutputJHjIìÌ‘U½Ñ‘U½Ñ{QRzR>QÐÔŠÎ‘U½Ñ‘U½ÑQSqNšTzR>QqNšT¥UôR¥UôRQS{QRqNšTN;³Ç