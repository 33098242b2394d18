
BoutputJOÔ‘UR…¼ôRjIdQqN