
BoutputJzR>QjIìÌ¶ÐdQN;³Ç