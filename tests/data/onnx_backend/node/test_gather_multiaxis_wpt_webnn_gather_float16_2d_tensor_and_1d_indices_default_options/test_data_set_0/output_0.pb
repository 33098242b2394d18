
BoutputJ ÐÔŠÎN;³Ç¶ÐdQ!ÔOÔ{QR…¼MÒ{QRjIìÌ