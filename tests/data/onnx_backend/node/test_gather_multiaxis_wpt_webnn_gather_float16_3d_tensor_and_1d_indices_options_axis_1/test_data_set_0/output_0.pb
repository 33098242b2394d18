
BoutputJ$ÐÔŠÎÐÔŠÎ‘U½Ñ…¼MÒ…¼MÒ¥UôR¶ÐdQ¶ÐdQN;³Ç