
BoutputJ@jIìÌ¶ÐdQN;³ÇqNšTzR>Q…¼MÒ¥UôRQSzR>Q…¼MÒ¥UôRQSzR>Q…¼MÒ¥UôRQS