
BoutputJ$¶ĞdQN;³ÇqNšT¥UôRQSjIìÌ¥UôRQSjIìÌ